package dev.mineclaw.core.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The nodes read for a player: the fixed set, the budget tiers' nodes and the nodes the bridge
 * asked for in {@code link.state}, each once, replaced whole by the next state.
 */
class PermissionsReportedTest {
    @AfterEach
    void reset() {
        Permissions.budgetTiers(List.of());
        Permissions.reportNodes(List.of());
    }

    @Test
    void askedNodesComeAfterTheFixedSetAndTheTiersEachOnce() {
        Permissions.budgetTiers(List.of("vip"));
        Permissions.reportNodes(List.of("myserver.lookup", Permissions.CHAT, "mineclaw.budget.vip",
                "group.builder", "myserver.lookup"));
        List<String> expected = new ArrayList<>(Permissions.REPORTED);
        expected.addAll(List.of("mineclaw.budget.vip", "myserver.lookup", "group.builder"));
        assertEquals(expected, Permissions.reported());
    }

    @Test
    void aLaterStateReplacesTheAskedNodes() {
        Permissions.reportNodes(List.of("myserver.lookup"));
        Permissions.reportNodes(List.of());
        assertEquals(Permissions.REPORTED, Permissions.reported());
    }
}
