package dev.mineclaw.core.platform;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The permission nodes the plugin reports as facts, and which subcommand needs which. */
public final class Permissions {
    public static final String CHAT = "mineclaw.command.chat";
    public static final String APPROVE = "mineclaw.command.approve";
    public static final String BYPASS_RATELIMIT = "mineclaw.bypass.ratelimit";
    /** Lets a player ask the agent to run commands at all (the bridge's run_command tool needs it). */
    public static final String TOOL_RUN_COMMAND = "mineclaw.tool.run_command";

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
            TOOL_RUN_COMMAND);

    private static final Map<String, String> SUBCOMMAND_NODES = Map.of(
            "approve", APPROVE,
            "deny", APPROVE,
            "listen", "mineclaw.command.listen",
            "reload", "mineclaw.command.reload",
            "compact", "mineclaw.command.compact",
            "clear", "mineclaw.command.clear",
            "stop", "mineclaw.command.stop",
            "model", "mineclaw.command.model",
            "tools", "mineclaw.command.tools",
            "functions", "mineclaw.command.functions");

    private Permissions() {}

    /**
     * The node a {@code /mineclaw} subcommand needs, when the plugin knows it. The bridge decides
     * in the end; this only lets the plugin refuse early (defence in depth).
     */
    public static Optional<String> nodeForSubcommand(String subcommand) {
        return Optional.ofNullable(SUBCOMMAND_NODES.get(subcommand.toLowerCase(java.util.Locale.ROOT)));
    }
}
