/// Exit statuses.
public enum ExitCode {
    /// Everything worked.
    public static let success: Int32 = 0
    /// A runtime failure.
    public static let failure: Int32 = 1
    /// The command finished but rejected some input (ingest) or some queries failed (piped REPL/query).
    public static let partial: Int32 = 2
    /// `EX_USAGE` from sysexits.h: the command line was wrong.
    public static let usage: Int32 = 64
    /// Stopped by Ctrl-C (SIGINT), as a shell reports a process killed by it: 128 + 2.
    public static let interrupted: Int32 = 130
}
