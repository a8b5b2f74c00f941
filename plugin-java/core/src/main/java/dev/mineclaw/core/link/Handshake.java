package dev.mineclaw.core.link;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.MineclawException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** The plugin's half of the link handshake: proving it holds the token without sending it. */
public final class Handshake {
    /** Domain separation, so a MAC made for the link is useless anywhere else. */
    private static final String LABEL = "mineclaw-link-v1\n";

    private Handshake() {}

    /**
     * HMAC-SHA256 keyed with the token's UTF-8 bytes over {@code "mineclaw-link-v1\n" + nonce +
     * "\n" + instanceId}, as 64 lowercase hex characters.
     */
    public static String mac(String token, String nonce, String instanceId) {
        return mac(token, nonce, instanceId, "");
    }

    /**
     * The MAC of a {@code hello} naming {@code serverId} (empty: none): the id is part of the
     * message, {@code ... + "\n" + instanceId + "\n" + serverId}, so a MAC made for one server
     * cannot be replayed under another id.
     */
    public static String mac(String token, String nonce, String instanceId, String serverId) {
        if (token.isEmpty()) {
            throw new MineclawException("the link token is empty");
        }
        try {
            Mac hmac = Mac.getInstance("HmacSHA256");
            hmac.init(new SecretKeySpec(token.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            String message = LABEL + nonce + "\n" + instanceId + (serverId.isEmpty() ? "" : "\n" + serverId);
            byte[] digest = hmac.doFinal(message.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (GeneralSecurityException exc) {
            throw new MineclawException("HMAC-SHA256 is unavailable in this JVM", exc);
        }
    }

    /**
     * What the plugin says about itself in {@code hello}. Immutable.
     *
     * @param serverId which server of the bridge's {@code servers.yml} this is; empty for the
     *     default server (the bridge's {@code link.token})
     * @param dataVersion the server's data version, 0 when unknown (then not sent)
     */
    public record Identity(UUID instanceId, String pluginVersion, String minecraftVersion, String platform,
            List<String> features, String serverId, int dataVersion) {
        public Identity {
            features = List.copyOf(features);
            java.util.Objects.requireNonNull(serverId, "serverId");
        }

        /** An identity without a data version (sent without {@code data_version}). */
        public Identity(UUID instanceId, String pluginVersion, String minecraftVersion, String platform,
                List<String> features, String serverId) {
            this(instanceId, pluginVersion, minecraftVersion, platform, features, serverId, 0);
        }

        /** The identity of the default server (no server id). */
        public Identity(UUID instanceId, String pluginVersion, String minecraftVersion, String platform,
                List<String> features) {
            this(instanceId, pluginVersion, minecraftVersion, platform, features, "");
        }
    }

    /**
     * The protocol minor version this plugin speaks (1.1: snapshots and approval prompts; 1.2: /ai;
     * 1.3: game facts; 1.4: server knowledge; 1.5: questions kept until they end).
     */
    public static final int PROTOCOL_MINOR = 5;

    /** The data of the {@code hello} request answering a challenge's nonce. */
    public static JsonObject helloData(Identity identity, String token, String nonce) {
        String instanceId = identity.instanceId().toString();
        JsonObject protocol = new JsonObject();
        protocol.addProperty("major", 1);
        protocol.addProperty("minor", PROTOCOL_MINOR);
        JsonArray features = new JsonArray();
        identity.features().forEach(features::add);
        JsonObject data = new JsonObject();
        data.add("protocol", protocol);
        data.addProperty("nonce", nonce);
        data.addProperty("mac", mac(token, nonce, instanceId, identity.serverId()));
        data.addProperty("instance_id", instanceId);
        data.addProperty("plugin_version", identity.pluginVersion());
        data.addProperty("minecraft_version", identity.minecraftVersion());
        data.addProperty("platform", identity.platform());
        data.add("features", features);
        if (!identity.serverId().isEmpty()) {
            data.addProperty("server_id", identity.serverId());
        }
        if (identity.dataVersion() > 0) {
            data.addProperty("data_version", identity.dataVersion());
        }
        return data;
    }
}
