package dev.mineclaw.core.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class FeedbackCollectorTest {
    @Test
    void keepsLinesInOrderWithTheDispatchFlag() {
        FeedbackCollector collector = new FeedbackCollector();
        collector.add("Set the time to 1000");
        collector.add(null);
        collector.add("second");
        ConsoleDispatch result = collector.result(true);
        assertTrue(result.dispatched());
        assertEquals(List.of("Set the time to 1000", "second"), result.feedback());
        assertFalse(collector.result(false).dispatched());
    }

    @Test
    void manyLinesStayWithinTheProtocolBoundAndSayHowManyWereLeftOut() {
        FeedbackCollector collector = new FeedbackCollector();
        for (int i = 0; i < 100; i++) {
            collector.add("line " + i);
        }
        List<String> feedback = collector.result(true).feedback();
        assertEquals(FeedbackCollector.MAX_LINES, feedback.size());
        assertEquals("line 62", feedback.get(62));
        // Lines 63..99 are not shown: 37 of them.
        assertEquals("... 37 more lines not shown", feedback.get(63));
    }

    @Test
    void exactlyTheBoundNeedsNoMarker() {
        FeedbackCollector collector = new FeedbackCollector();
        for (int i = 0; i < FeedbackCollector.MAX_LINES; i++) {
            collector.add("line " + i);
        }
        List<String> feedback = collector.result(true).feedback();
        assertEquals("line 63", feedback.get(63));
    }

    @Test
    void longLinesAreClippedWithoutSplittingASurrogatePair() {
        FeedbackCollector collector = new FeedbackCollector();
        String emoji = "\uD83D\uDE00";
        collector.add("a".repeat(FeedbackCollector.MAX_LINE_CHARS - 1) + emoji + "tail");
        collector.add("b".repeat(5000));
        List<String> feedback = collector.result(true).feedback();
        assertEquals(FeedbackCollector.MAX_LINE_CHARS - 1, feedback.get(0).length());
        assertFalse(Character.isHighSurrogate(feedback.get(0).charAt(feedback.get(0).length() - 1)));
        assertEquals(FeedbackCollector.MAX_LINE_CHARS, feedback.get(1).length());
    }
}
