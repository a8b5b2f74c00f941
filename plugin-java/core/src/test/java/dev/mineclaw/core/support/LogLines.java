package dev.mineclaw.core.support;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** The records a logger publishes, kept for a test to read; attach, act, then look. */
public final class LogLines extends Handler {
    private final BlockingQueue<LogRecord> records = new LinkedBlockingQueue<>();

    /** A handler attached to {@code logger}. */
    public static LogLines on(Logger logger) {
        LogLines lines = new LogLines();
        logger.addHandler(lines);
        return lines;
    }

    @Override
    public void publish(LogRecord record) {
        this.records.add(record);
    }

    /** The next record, waiting at most {@code millis}; null if none came. */
    public LogRecord poll(long millis) throws InterruptedException {
        return this.records.poll(millis, TimeUnit.MILLISECONDS);
    }

    /** Every record so far as {@code "LEVEL message"}, without consuming them. */
    public List<String> lines() {
        return this.records.stream().map(record -> record.getLevel() + " " + record.getMessage()).toList();
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
    }
}
