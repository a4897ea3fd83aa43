/// What an ingest run did, per run (all inputs together).
struct IngestSummary: Hashable, Sendable {
    var lines = 0
    var ingested = 0
    var duplicates = 0
    var rejected = 0
    /// Lines skipped because a checkpoint says an earlier run already committed them.
    var resumedLines = 0
    /// Events of batch files skipped for the same reason.
    var resumedEvents = 0
    var bytes = 0
    var inputs = 0
    /// Files whose last line had no newline and did not parse: rejected (and counted in ``rejected``), with the
    /// checkpoint left before it, so a later run reads it again (a writer may still be finishing it).
    var unfinishedLines = 0
    /// Files that had a checkpoint which does not fit them as they are now (the bytes before it changed, or the
    /// file is shorter): read from their start instead, each with the line the checkpoint was at.
    var restarted: [Restart] = []

    /// A file read from its start although a checkpoint was stored for it.
    struct Restart: Hashable, Sendable {
        var input: String
        /// Where the checkpoint said an earlier run stopped: lines (NDJSON) or events (batch files).
        var line: Int
        var isBatchFile: Bool
    }
}
