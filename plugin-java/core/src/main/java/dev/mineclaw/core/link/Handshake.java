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
        if (token.isEmpty()) {
            throw new MineclawException("the link token is empty");
        }
        try {
            Mac hmac = Mac.getInstance("HmacSHA256");
            hmac.init(new SecretKeySpec(token.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] digest = hmac.doFinal((LABEL + nonce + "\n" + instanceId).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (GeneralSecurityException exc) {
            throw new MineclawException("HMAC-SHA256 is unavailable in this JVM", exc);
        }
    }

    /** What the plugin says about itself in {@code hello}. Immutable. */
    public record Identity(UUID instanceId, String pluginVersion, String minecraftVersion, String platform,
            List<String> features) {
        public Identity {
            features = List.copyOf(features);
        }
    }

    /** The protocol minor version this plugin speaks (1.1: snapshots and approval prompts). */
    public static final int PROTOCOL_MINOR = 1;

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
        data.addProperty("mac", mac(token, nonce, instanceId));
        data.addProperty("instance_id", instanceId);
        data.addProperty("plugin_version", identity.pluginVersion());
        data.addProperty("minecraft_version", identity.minecraftVersion());
        data.addProperty("platform", identity.platform());
        data.add("features", features);
        return data;
    }
}
