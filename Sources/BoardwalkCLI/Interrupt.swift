import Boardwalk

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
