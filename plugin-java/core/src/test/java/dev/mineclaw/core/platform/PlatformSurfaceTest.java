package dev.mineclaw.core.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every {@link Platform} method is a read or call each adapter must implement and the testkit must
 * police, so one the core never calls is cost without use. {@code heldItem} and
 * {@code targetBlock} were such: the snapshots read the inventory and the block looked at through
 * {@link Platform#inventory} and {@link Platform#lookedAtBlock}.
 */
class PlatformSurfaceTest {
    @Test
    void theUnusedHandAndSightReadsAreGone() {
        Set<String> removed = Set.of("heldItem", "targetBlock");
        List<String> present = Arrays.stream(Platform.class.getMethods()).map(Method::getName)
                .filter(removed::contains).sorted().toList();
        assertEquals(List.of(), present);
    }
}
