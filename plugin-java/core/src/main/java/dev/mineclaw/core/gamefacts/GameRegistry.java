package dev.mineclaw.core.gamefacts;

/**
 * A server's item and recipe registries as the core reads them for {@code facts.recipes} and
 * {@code facts.item}. Thin: it reads, the core decides.
 */
public interface GameRegistry {
    /**
     * A number that changes whenever what {@link #read()} returns may have changed (a datapack
     * reload, a plugin enabled or disabled, a recipe added through the platform's own hook). The
     * core keeps its index while the stamp stays the same. Any thread, and cheap.
     */
    long stamp();

    /** Everything the index needs, read now. Global executor (Folia's global region scheduler). */
    RegistryFacts read();
}
