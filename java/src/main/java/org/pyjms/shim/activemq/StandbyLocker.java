package org.pyjms.shim.activemq;

import java.io.IOException;
import org.apache.activemq.store.SharedFileLocker;

/**
 * KahaDB's shared-file lock for one broker of a failover pair over one data directory
 * (ActiveMQ's shared file system master/slave): the broker that holds the lock serves; the
 * other waits in BrokerService.start() as its standby and takes over when the lock is freed
 * (the OS frees it when the holder dies, SIGKILL included). It tells the standby's owner once
 * that it waits, and looks for the lock every {@link #POLL_MS} ms instead of ActiveMQ's 10 s,
 * so that a takeover comes within a second of the holder's death.
 */
public final class StandbyLocker extends SharedFileLocker {
    /** How often a standby tries the lock. */
    public static final long POLL_MS = 250;

    private final Runnable standingBy;

    public StandbyLocker(Runnable standingBy) {
        this.standingBy = standingBy;
        setLockAcquireSleepInterval(POLL_MS);
    }

    @Override
    public void doStart() throws Exception {
        // one try that fails at once if the lock is held, so that the owner hears of the wait
        setFailIfLocked(true);
        try {
            super.doStart();
            return;
        } catch (IOException held) {
            doStop(null); // forgets the failed lock file (the OS lock was never taken)
        }
        standingBy.run();
        setFailIfLocked(false);
        super.doStart(); // waits until the lock is free, or the broker stops
    }
}
