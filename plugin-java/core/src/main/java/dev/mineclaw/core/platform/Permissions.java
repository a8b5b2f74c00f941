package dev.mineclaw.core.platform;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The permission nodes the plugin reports as facts, and which subcommand needs which. */
public final class Permissions {
    public static final String CHAT = "mineclaw.command.chat";
    public static final String APPROVE = "mineclaw.command.approve";
    public static final String BYPASS_RATELIMIT = "mineclaw.bypass.ratelimit";
    /** Lets a player ask the agent to run commands at all (the bridge's run_command tool needs it). */
    public static final String TOOL_RUN_COMMAND = "mineclaw.tool.run_command";
    /** A private conversation with the assistant ({@code /ai}), and clearing or stopping one's own. */
    public static final String PRIVATE = "mineclaw.command.private";
    private static final String CLEAR = "mineclaw.command.clear";
    /** The argument that points {@code clear} and {@code stop} at the sender's own private lane. */
    private static final String OWN_LANE = "private";
    /** Lets a player give the second confirmation of a console command (the two-person rule). */
    public static final String APPROVE_CONSOLE = "mineclaw.approve.console";
    /** Lets a sender see another player's token usage with {@code /mineclaw usage <player>}. */
    public static final String USAGE_OTHERS = "mineclaw.usage.others";
    /** A budget tier's node is this prefix and the tier's name (the bridge names the tiers). */
    public static final String BUDGET_PREFIX = "mineclaw.budget.";

    /** Every node a sender's granted facts may contain, in the protocol's order. */
    public static final List<String> REPORTED = List.of(
            CHAT,
            APPROVE,
            "mineclaw.command.listen",
            "mineclaw.command.reload",
            "mineclaw.command.compact",
            "mineclaw.command.clear",
            "mineclaw.command.stop",
            "mineclaw.command.model",
            "mineclaw.command.tools",
            "mineclaw.command.functions",
            BYPASS_RATELIMIT,
            TOOL_RUN_COMMAND,
            PRIVATE,
            APPROVE_CONSOLE,
            USAGE_OTHERS);

    /**
     * The budget nodes of the tiers the bridge's latest {@code link.state} named. One bridge
     * per plugin, so one set per process; replaced whole, read without locking.
     */
    private static volatile List<String> budgetNodes = List.of();

    /**
     * The other nodes the bridge's latest {@code link.state} asked to be reported (its tools'
     * permissions), less those {@link #REPORTED} already names. Replaced whole.
     */
    private static volatile List<String> askedNodes = List.of();

    private static final Map<String, String> SUBCOMMAND_NODES = Map.ofEntries(
            Map.entry("approve", APPROVE),
            Map.entry("deny", APPROVE),
            Map.entry("listen", "mineclaw.command.listen"),
            Map.entry("reload", "mineclaw.command.reload"),
            // The managed bridge's status, answered by the plugin itself: the owner's node.
            Map.entry("bridge", "mineclaw.command.reload"),
            Map.entry("compact", "mineclaw.command.compact"),
            Map.entry("clear", CLEAR),
            Map.entry("ai", PRIVATE),
            Map.entry("model", "mineclaw.command.model"),
            Map.entry("tools", "mineclaw.command.tools"),
            Map.entry("functions", "mineclaw.command.functions"),
            // Not in the fixed set: the bridge names it in report_nodes; undeclared, Bukkit
            // gives it to operators only.
            Map.entry("history", "mineclaw.command.history"));

    /** Second words of a guarded subcommand that need no node (each player's own choice). */
    public static final Map<String, Set<String>> OPEN_CHOICES = Map.of("listen", Set.of("ignore-me", "include-me"));

    private Permissions() {}

    /** The bridge named its budget tiers: their nodes are reported from now on. */
    public static void budgetTiers(List<String> tiers) {
        List<String> nodes = new ArrayList<>();
        for (String tier : tiers) {
            nodes.add(BUDGET_PREFIX + tier);
        }
        budgetNodes = List.copyOf(nodes);
    }

    /** The bridge named the other nodes it decides by: they are reported from now on. */
    public static void reportNodes(List<String> nodes) {
        List<String> asked = new ArrayList<>();
        for (String node : nodes) {
            if (!REPORTED.contains(node) && !node.startsWith(BUDGET_PREFIX) && !asked.contains(node)) {
                asked.add(node);
            }
        }
        askedNodes = List.copyOf(asked);
    }

    /**
     * Every node to read for a player now: {@link #REPORTED}, then the budget tiers' nodes, then
     * the nodes the bridge asked for.
     */
    public static List<String> reported() {
        List<String> tiers = budgetNodes;
        List<String> asked = askedNodes;
        if (tiers.isEmpty() && asked.isEmpty()) {
            return REPORTED;
        }
        List<String> all = new ArrayList<>(REPORTED);
        all.addAll(tiers);
        all.addAll(asked);
        return List.copyOf(all);
    }

    /**
     * The node a {@code /mineclaw} subcommand needs, when the plugin knows it. The bridge decides
     * in the end; this only lets the plugin refuse early (defence in depth).
     */
    public static Optional<String> nodeForSubcommand(String subcommand) {
        return Optional.ofNullable(SUBCOMMAND_NODES.get(subcommand.toLowerCase(java.util.Locale.ROOT)));
    }

    /**
     * The node a whole {@code /mineclaw} invocation needs, when the plugin knows it. {@code clear private}
     * and {@code stop private} act on the sender's own private lane and need only {@link #PRIVATE};
     * {@code stop} has no node here: the player who asked the running public turn may stop it, which
     * only the bridge knows, and the bridge checks {@code mineclaw.command.stop} for everyone else.
     * {@code listen ignore-me} and {@code listen include-me} are every player's own choice and need
     * no node.
     */
    public static Optional<String> nodeFor(List<String> args) {
        if (args.isEmpty()) {
            return Optional.empty();
        }
        String subcommand = args.get(0).toLowerCase(java.util.Locale.ROOT);
        boolean ownLane = args.size() == 2 && OWN_LANE.equals(args.get(1).toLowerCase(java.util.Locale.ROOT));
        if (ownLane && ("clear".equals(subcommand) || "stop".equals(subcommand))) {
            return Optional.of(PRIVATE);
        }
        if (args.size() > 1 && OPEN_CHOICES.getOrDefault(subcommand, Set.of())
                .contains(args.get(1).toLowerCase(java.util.Locale.ROOT))) {
            return Optional.empty();
        }
        return nodeForSubcommand(subcommand);
    }
}
