import Boardwalk
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Set by SIGINT while the REPL runs: cancels the running query (the executor checks it), or abandons the
/// line being edited. A global so the C signal handler can reach it; touched before the handler is installed,
/// so its lazy initialization never runs inside the handler.
let interruptFlag = CancellationFlag()

/// Installs the SIGINT handler that sets ``interruptFlag`` (without `SA_RESTART`, so a blocked `read` in
/// line editing returns and the line can be abandoned).
func installInterruptHandler() {
    _ = interruptFlag.isCancelled  // initialize the global outside the handler
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in interruptFlag.cancel() }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(SIGINT, &action, nil)
    // A parent may have spawned us with SIGINT blocked (Foundation's Process passes its thread's mask on):
    // unblock it, or Ctrl-C would stay pending forever.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigprocmask(SIG_UNBLOCK, &set, nil)
}

/// The signal that asked a command to stop (`SIGINT` or `SIGTERM`); 0 while none did. Set with ``interruptFlag``
/// by the handlers of ``installStopHandlers()``. Touched before they are installed (its lazy initialization must not
/// run inside a handler).
let stopSignal = Atomic<Int32>(0)

/// Installs handlers for `SIGINT` and `SIGTERM` that set ``stopSignal`` and ``interruptFlag``, for the commands that
/// write files and must remove what they began before they exit (`backup`, `export`). A signal the process inherited
/// as ignored stays ignored: a script's background job (`boardwalk backup … &`) ignores Ctrl-C typed at its terminal,
/// as the shell meant, and stops on SIGTERM.
func installStopHandlers() {
    interruptFlag.reset()
    stopSignal.store(0, ordering: .relaxed)
    var unblock = sigset_t()
    sigemptyset(&unblock)
    for signal in [SIGINT, SIGTERM] {
        var current = sigaction()
        sigaction(signal, nil, &current)
        // SIG_IGN is the handler 1 (<signal.h>), which Swift does not import.
        if unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1 { continue }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in
            stopSignal.store(signal, ordering: .relaxed)
            interruptFlag.cancel()
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(signal, &action, nil)
        sigaddset(&unblock, signal)
    }
    sigprocmask(SIG_UNBLOCK, &unblock, nil)
}

/// The exit status for a command stopped by ``stopSignal``: 128 + the signal (130 for `SIGINT`, 143 for `SIGTERM`).
func stoppedStatus() -> Int32 {
    let signal = stopSignal.load(ordering: .relaxed)
    return signal == SIGTERM ? ExitCode.terminated : ExitCode.interrupted
}
