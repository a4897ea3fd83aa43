/// Exit statuses.
package enum ExitCode {
    /// Everything worked.
    package static let success: Int32 = 0
    /// A runtime failure.
    package static let failure: Int32 = 1
    /// The command finished but rejected some input (ingest) or some queries failed (piped REPL/query).
    package static let partial: Int32 = 2
    /// `EX_USAGE` from sysexits.h: the command line was wrong.
    package static let usage: Int32 = 64
    /// Stopped by Ctrl-C (SIGINT), as a shell reports a process killed by it: 128 + 2.
    package static let interrupted: Int32 = 130
    /// Stopped by SIGTERM (`backup`, `export`), as a shell reports a process killed by it: 128 + 15.
    package static let terminated: Int32 = 143
}
