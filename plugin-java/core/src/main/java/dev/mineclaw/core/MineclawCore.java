package dev.mineclaw.core;

import com.google.gson.JsonObject;
import dev.mineclaw.core.approval.ApprovalPrompt;
import dev.mineclaw.core.approval.ApprovalRequests;
import dev.mineclaw.core.bridge.BookRequests;
import dev.mineclaw.core.bridge.BridgeRequests;
import dev.mineclaw.core.chat.ChatOutcome;
import dev.mineclaw.core.chat.ChatService;
import dev.mineclaw.core.chat.KeptAsks;
import dev.mineclaw.core.command.CommandForwarder;
import dev.mineclaw.core.command.CommandResolution;
import dev.mineclaw.core.command.CommandSender;
import dev.mineclaw.core.command.ServerKnowledge;
import dev.mineclaw.core.gamefacts.GameFactsRequests;
import dev.mineclaw.core.gamefacts.GameRegistry;
import dev.mineclaw.core.gesture.GestureAnswers;
import dev.mineclaw.core.link.BridgeLink;
import dev.mineclaw.core.link.Handshake;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.link.LinkListener;
import dev.mineclaw.core.link.LinkState;
import dev.mineclaw.core.managed.ManagedBridge;
import dev.mineclaw.core.platform.Permissions;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.platform.ServerCatalogue;
import dev.mineclaw.core.snapshot.SnapshotRequests;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.TextRenderer;
import dev.mineclaw.core.wire.MessageTypes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The plugin, independent of any server: platform adapters create one, forward chat, commands and
 * joins to it, and call {@link #stop()} on disable.
 */
public final class MineclawCore {
    /** The {@code /mineclaw} subcommand {@code /ai} travels as. */
    public static final String AI_SUBCOMMAND = "ai";
    /** The {@code /mineclaw} subcommand the plugin answers itself: the managed bridge's status. */
    public static final String BRIDGE_SUBCOMMAND = "bridge";
    private final Platform platform;
    private final LinkClient link;
    private final TextRenderer renderer = new TextRenderer();
    private final Messages messages;
    private final ChatService chat;
    private final CommandForwarder commands;
    private final GestureAnswers gestures;
    private final KeptAsks asks;
    private volatile ManagedBridge managed;

    /** @param observer told about the link's life too (may be a no-op); must not block */
    public MineclawCore(Platform platform, CoreSettings settings, LinkListener observer) {
        this.platform = platform;
        this.messages = new Messages(settings.locale(), settings.messages(), this.renderer);
        GameRegistry registry = platform.gameRegistry();
        List<String> features = new ArrayList<>(settings.features());
        if (registry != null && !features.contains(GameFactsRequests.FEATURE)) {
            features.add(GameFactsRequests.FEATURE); // announced only where the registries can be read
        }
        if (platform.opensBooks() && !features.contains(BookRequests.FEATURE)) {
            features.add(BookRequests.FEATURE);
        }
        ServerCatalogue catalogue = platform.serverCatalogue();
        if (catalogue != null && !features.contains(ServerKnowledge.FEATURE)) {
            features.add(ServerKnowledge.FEATURE); // announced only where plugins and commands can be listed
        }
        if (!features.contains(KeptAsks.FEATURE)) {
            features.add(KeptAsks.FEATURE); // questions carry ids and are kept until they end
        }
        Handshake.Identity identity = new Handshake.Identity(settings.instanceId(), platform.pluginVersion(),
                platform.minecraftVersion(), platform.platformName(), features, settings.serverId(),
                platform.dataVersion());
        ChatService[] chatRef = new ChatService[1];
        KeptAsks[] askRef = new KeptAsks[1];
        this.link = new LinkClient(settings.link(), identity, settings.tokens(), new LinkListener() {
            @Override
            public void linkUp(String sessionId) {
                askRef[0].linkUp();
                observer.linkUp(sessionId);
            }

            @Override
            public void linkDown(String reason) {
                askRef[0].linkDown();
                observer.linkDown(reason);
            }

            @Override
            public void linkState(LinkState state) {
                Permissions.budgetTiers(state.budgetTiers());
                Permissions.reportNodes(state.reportNodes());
                chatRef[0].linkState(state);
                askRef[0].linkState(state.asks());
                observer.linkState(state);
            }
        }, platform.logger());
        this.chat = new ChatService(this.link, this.messages, this.renderer, settings.defaultPrefix(),
                settings.verdictTimeout(), platform.logger());
        chatRef[0] = this.chat;
        this.asks = new KeptAsks(this.link, platform, this.messages, this.renderer, settings.askMaxAge(),
                settings.link().requestTimeout(), System::nanoTime);
        askRef[0] = this.asks;
        this.chat.keep(this.asks);
        this.commands = new CommandForwarder(platform, this.link, this.messages, this.renderer,
                settings.link().requestTimeout());
        this.commands.keep(this.asks);
        BridgeRequests output = new BridgeRequests(platform, this.renderer, settings.link().requestTimeout());
        output.onAnswered(this.asks::answered);
        output.register(this.link);
        this.link.onEvent(MessageTypes.ASK_DONE, data -> this.asks.forget(data.get("ask").getAsString()));
        new SnapshotRequests(platform, settings.link().requestTimeout()).register(this.link);
        if (registry != null) {
            new GameFactsRequests(platform, registry, settings.link().requestTimeout()).register(this.link);
        }
        new CommandResolution(platform, settings.link().requestTimeout()).register(this.link);
        if (platform.opensBooks()) {
            new BookRequests(platform, this.renderer, settings.link().requestTimeout()).register(this.link);
        }
        if (catalogue != null) {
            new ServerKnowledge(platform, catalogue, settings.link().requestTimeout()).register(this.link);
        }
        // A gesture approves as the player's own click would: /mineclaw approve <token> gesture.
        this.gestures = new GestureAnswers(System::nanoTime, (player, token, gesture) -> this.commands
                .handle(CommandSender.player(player), List.of("approve", token, GestureAnswers.OPTION)));
        new ApprovalRequests(platform, new ApprovalPrompt(this.renderer), settings.link().requestTimeout(),
                this.gestures).register(this.link);
    }

    /**
     * The gestures a player may answer a yes/no question with: adapters report sneaks, pitch
     * changes and right-clicks in air to it (see {@link GestureAnswers}).
     */
    public GestureAnswers gestures() {
        return this.gestures;
    }

    /**
     * The bridge the plugin runs itself ({@code bridge.managed}): started with {@link #start()},
     * stopped with {@link #stop()}, shown by {@code /mineclaw bridge status}. Call before start.
     */
    public void manage(ManagedBridge bridge) {
        this.managed = bridge;
    }

    /** Starts the managed bridge, if any, and connecting to the bridge; returns at once. */
    public void start() {
        ManagedBridge bridge = this.managed;
        if (bridge != null) {
            bridge.start();
        }
        this.link.start();
    }

    /**
     * Closes the link (nothing reconnects afterwards), then stops the managed bridge: SIGTERM and
     * a bounded wait.
     */
    public void stop() {
        this.link.close();
        ManagedBridge bridge = this.managed;
        if (bridge != null) {
            bridge.stop();
        }
    }

    /**
     * Decides a public chat message and shows any private notice to the sender. Completes within
     * the verdict timeout; the adapter applies the outcome to its chat event.
     */
    public CompletableFuture<ChatOutcome> chat(PlayerRef player, Collection<String> granted, String text) {
        return this.chat.decide(player, granted, text).thenApply(outcome -> {
            if (outcome.notice() != null) {
                this.platform.runForPlayer(player.uuid(),
                        () -> this.platform.sendMessage(player.uuid(), outcome.notice()), () -> { });
            }
            return outcome;
        });
    }

    /** Forwards {@code /mineclaw args}; completes when the reply lines were shown. */
    public CompletableFuture<Void> command(CommandSender sender, List<String> args) {
        if (!sender.isConsole() && args.size() >= 2 && ApprovalPrompt.ANSWERS.contains(args.get(0))) {
            // A click on a prompt: the player's later gesture must not answer it again.
            this.gestures.answered(sender.player().uuid(), args.get(1));
        }
        if (!args.isEmpty() && BRIDGE_SUBCOMMAND.equalsIgnoreCase(args.get(0))) {
            return this.commands.answerHere(sender, args, () -> bridgeLines(args));
        }
        return this.commands.handle(sender, args);
    }

    /**
     * {@code /ai question}: a private question to the assistant, forwarded as the {@code ai} command
     * with the whole question as one argument; {@code /ai} alone gets the usage line from the bridge.
     * Completes when the reply lines were shown.
     */
    public CompletableFuture<Void> ask(PlayerRef player, String question) {
        String asked = question.strip();
        List<String> args = asked.isEmpty() ? List.of(AI_SUBCOMMAND) : List.of(AI_SUBCOMMAND, asked);
        return this.commands.handle(CommandSender.player(player), args);
    }

    private List<net.kyori.adventure.text.Component> bridgeLines(List<String> args) {
        ManagedBridge bridge = this.managed;
        List<String> lines;
        if (args.size() != 2 || !"status".equalsIgnoreCase(args.get(1))) {
            lines = List.of("usage: /mineclaw bridge status");
        } else if (bridge == null) {
            lines = List.of("this plugin does not run the bridge (bridge.managed is off in plugin-link.yml)");
        } else {
            lines = bridge.statusLines();
        }
        return lines.stream().map(line -> (net.kyori.adventure.text.Component) net.kyori.adventure.text.Component
                .text(line)).toList();
    }

    /** Tells the bridge a player joined (dropped while the link is down). */
    public void playerJoined(PlayerRef player) {
        playerEvent("player.join", player);
    }

    /** Tells the bridge a player left (dropped while the link is down). */
    public void playerQuit(PlayerRef player) {
        this.gestures.forget(player.uuid());
        this.asks.playerQuit(player.uuid());
        playerEvent("player.quit", player);
    }

    private void playerEvent(String type, PlayerRef player) {
        JsonObject data = new JsonObject();
        data.add("player", player.toJson());
        this.link.sendEvent(type, data);
    }

    public BridgeLink link() {
        return this.link;
    }

    /** The questions kept until the bridge ends them. */
    public KeptAsks asks() {
        return this.asks;
    }

    public Messages messages() {
        return this.messages;
    }

    public TextRenderer renderer() {
        return this.renderer;
    }
}
