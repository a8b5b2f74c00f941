package dev.mineclaw.core.gesture;

/** The gestures Mineclaw offers for answering a yes/no question without clicking. */
public enum Gesture {
    /** Starting to sneak. */
    SNEAK,
    /** Looking straight up (after having looked elsewhere since the question came). */
    LOOK_UP,
    /** Right-clicking air with an item that has no use of its own there ({@link InertItems}). */
    USE_ITEM
}
