package dev.mineclaw.paper;

import dev.mineclaw.core.platform.BlockFacts;
import dev.mineclaw.core.platform.BlockLookup;
import dev.mineclaw.core.platform.BlockStateText;
import dev.mineclaw.core.platform.InventoryFacts;
import dev.mineclaw.core.platform.ItemFacts;
import dev.mineclaw.core.platform.PlayerFacts;
import dev.mineclaw.core.platform.SightLine;
import dev.mineclaw.core.text.TextRenderer;
import io.papermc.paper.datacomponent.DataComponentTypes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bukkit.Location;
import org.bukkit.Server;
import org.bukkit.World;
import org.bukkit.attribute.Attribute;
import org.bukkit.attribute.AttributeInstance;
import org.bukkit.block.Block;
import org.bukkit.enchantments.Enchantment;
import org.bukkit.entity.Player;
import org.bukkit.inventory.ItemStack;
import org.bukkit.inventory.PlayerInventory;
import org.bukkit.inventory.meta.Damageable;
import org.bukkit.inventory.meta.ItemMeta;
import org.bukkit.potion.PotionEffect;
import org.bukkit.util.Vector;

/**
 * The snapshot reads, through the Bukkit API on the player's own executor: plain field reads
 * into the core's fact records. Names are plain text; nothing reads NBT, persistent data, tile
 * entities or container contents; block searches go through {@link SightLine}, which checks each
 * chunk is loaded and owned by this region before touching it.
 */
final class SnapshotReads {
    private final Server server;

    SnapshotReads(Server server) {
        this.server = server;
    }

    // isOnGround is the client's claim (deprecated for that reason); the snapshot only describes
    // the player to the model and no decision rests on it, so the claim is good enough.
    @SuppressWarnings("deprecation")
    PlayerFacts player(Player player) {
        Location at = player.getLocation();
        World world = player.getWorld();
        AttributeInstance maxHealth = player.getAttribute(Attribute.MAX_HEALTH);
        List<PlayerFacts.Effect> effects = new ArrayList<>();
        for (PotionEffect effect : player.getActivePotionEffects()) {
            effects.add(new PlayerFacts.Effect(effect.getType().getKey().asString(), effect.getAmplifier(),
                    effect.isInfinite() ? -1 : effect.getDuration()));
        }
        return new PlayerFacts(
                new PlayerFacts.Location(world.getName(), dimension(world.getEnvironment()), at.getX(), at.getY(),
                        at.getZ(), at.getYaw(), at.getPitch()),
                new PlayerFacts.Vitals(player.getHealth(), maxHealth == null ? player.getHealth() : maxHealth.getValue(),
                        player.getFoodLevel(), player.getSaturation(), player.getLevel()),
                PlayerFacts.GameMode.valueOf(player.getGameMode().name()),
                new PlayerFacts.Movement(player.isOnGround(), player.isSneaking(), player.isSprinting(),
                        player.isSwimming(), player.isGliding(), player.isFlying(), player.isInWater(),
                        player.isInLava(), player.isSleeping()),
                new PlayerFacts.Surroundings(world.getTime(), weather(world),
                        world.getBiome(at.getBlockX(), at.getBlockY(), at.getBlockZ()).getKey().asString(),
                        player.getEyeLocation().getBlock().getLightLevel()),
                effects);
    }

    InventoryFacts inventory(Player player) {
        PlayerInventory inventory = player.getInventory();
        Map<Integer, ItemFacts> slots = new HashMap<>();
        for (int index = 0; index <= InventoryFacts.LAST_SLOT; index++) {
            ItemStack item = inventory.getItem(index);
            if (item != null && !item.isEmpty()) {
                slots.put(index, item(item));
            }
        }
        return new InventoryFacts(inventory.getHeldItemSlot(), slots);
    }

    BlockLookup lookedAt(Player player, int maxDistance) {
        Location eyes = player.getEyeLocation();
        Vector direction = eyes.getDirection();
        return SightLine.look(eyes.getX(), eyes.getY(), eyes.getZ(), direction.getX(), direction.getY(),
                direction.getZ(), maxDistance, blocks(player.getWorld()));
    }

    BlockLookup atFeet(Player player) {
        Location feet = player.getLocation();
        return SightLine.feet(feet.getX(), feet.getY(), feet.getZ(), blocks(player.getWorld()));
    }

    private static ItemFacts item(ItemStack item) {
        ItemMeta meta = item.getItemMeta();
        String customName = meta != null && meta.hasCustomName() && meta.customName() != null
                ? TextRenderer.plain(meta.customName())
                : null;
        List<ItemFacts.Enchantment> enchantments = new ArrayList<>();
        for (Map.Entry<Enchantment, Integer> entry : item.getEnchantments().entrySet()) {
            enchantments.add(new ItemFacts.Enchantment(entry.getKey().getKey().asString(), entry.getValue()));
        }
        Durability durability = durability(item, meta);
        return new ItemFacts(item.getType().getKey().asString(), item.getAmount(), customName, enchantments,
                durability.damage(), durability.max());
    }

    /**
     * Damage and durability from the item's data components ({@code damage}, {@code max_damage}):
     * the stack's own value or its type's default, so a plain diamond sword has 1561. Where a
     * server reports no component (test servers), the type's durability and the meta's damage
     * stand in. (ItemMeta#hasMaxDamage only sees a max_damage set on the stack, as custom items
     * do, which left every ordinary tool without durability.)
     */
    @SuppressWarnings("deprecation") // getMaxDurability: the fallback only, for servers without components
    private static Durability durability(ItemStack item, ItemMeta meta) {
        Integer max = item.getData(DataComponentTypes.MAX_DAMAGE);
        Integer damage = item.getData(DataComponentTypes.DAMAGE);
        int maxDamage = max != null ? max : item.getType().getMaxDurability();
        int taken = damage != null ? damage : meta instanceof Damageable damageable ? damageable.getDamage() : 0;
        return new Durability(taken, maxDamage);
    }

    private record Durability(int damage, int max) {}

    private SightLine.Blocks blocks(World world) {
        return new SightLine.Blocks() {
            @Override
            public boolean readable(int chunkX, int chunkZ) {
                // Ownership first: on Folia even asking about a chunk of another region is off-limits.
                return SnapshotReads.this.server.isOwnedByCurrentRegion(world, chunkX, chunkZ)
                        && world.isChunkLoaded(chunkX, chunkZ);
            }

            @Override
            public String type(int x, int y, int z) {
                return world.getBlockAt(x, y, z).getType().getKey().asString();
            }

            @Override
            public BlockFacts facts(int x, int y, int z) {
                Block block = world.getBlockAt(x, y, z);
                return new BlockFacts(block.getType().getKey().asString(), world.getName(), x, y, z,
                        BlockStateText.properties(block.getBlockData().getAsString()), block.getLightLevel());
            }
        };
    }

    private static PlayerFacts.Dimension dimension(World.Environment environment) {
        return switch (environment) {
            case NORMAL -> PlayerFacts.Dimension.OVERWORLD;
            case NETHER -> PlayerFacts.Dimension.NETHER;
            case THE_END -> PlayerFacts.Dimension.END;
            default -> PlayerFacts.Dimension.CUSTOM;
        };
    }

    private static PlayerFacts.Weather weather(World world) {
        return world.isThundering() ? PlayerFacts.Weather.THUNDER
                : world.hasStorm() ? PlayerFacts.Weather.RAIN : PlayerFacts.Weather.CLEAR;
    }
}
