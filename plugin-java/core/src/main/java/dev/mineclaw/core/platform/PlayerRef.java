package dev.mineclaw.core.platform;

import com.google.gson.JsonObject;
import java.util.Objects;
import java.util.UUID;

/** An online player as the protocol names them: UUID and current name. Immutable. */
public record PlayerRef(UUID uuid, String name) {
    public PlayerRef {
        Objects.requireNonNull(uuid, "uuid");
        Objects.requireNonNull(name, "name");
    }

    /** The UUID in the protocol's lowercase 8-4-4-4-12 form. */
    public String uuidText() {
        return this.uuid.toString();
    }

    /** The protocol's PlayerRef object. */
    public JsonObject toJson() {
        JsonObject json = new JsonObject();
        json.addProperty("uuid", uuidText());
        json.addProperty("name", this.name);
        return json;
    }
}
