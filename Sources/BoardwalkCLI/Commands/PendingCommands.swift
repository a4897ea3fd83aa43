// Commands whose layer (store, query) has not landed on this branch yet. Their help is final; running them
// fails honestly with exit status 1 instead of pretending.

func notAvailable(_ command: String, needs layer: String) -> RuntimeError {
    RuntimeError("'boardwalk \(command)' is not available yet: it needs the \(layer), which is not built into this version")
}

enum IngestCommand: Command {
    static let name = "ingest"
    static let summary = "Read NDJSON (any shape) or batch files into the store"
    static let usage = "boardwalk ingest [--db DIR] [--rejects FILE] [--strict] [FILE...|-]"
    static let options = [
        databaseOption,
        OptionSpec("rejects", value: "FILE", help: "Where rejected lines go (default: <store>/rejects.txt)"),
        OptionSpec("strict", help: "Stop at the first bad line; nothing of its batch is committed"),
        OptionSpec("quiet", short: "q", help: "No progress bar and no summary"),
    ]
    static let discussion = ""
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        throw notAvailable(name, needs: "store")
    }
}

enum QueryCommand: Command {
    static let name = "query"
    static let summary = "Run one query (or each query read from stdin with '-')"
    static let usage = "boardwalk query [--db DIR] [--format table|json|csv] 'QUERY' | -"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "table (default), json or csv"),
    ]
    static let discussion = ""
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        throw notAvailable(name, needs: "query language")
    }
}

enum ReplCommand: Command {
    static let name = "repl"
    static let summary = "Interactive queries with line editing, history and completion"
    static let usage = "boardwalk repl [--db DIR]"
    static let options = [databaseOption]
    static let discussion = ""
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        throw notAvailable(name, needs: "query language")
    }
}

enum StatsCommand: Command {
    static let name = "stats"
    static let summary = "Events, sessions, onboardings, bytes on disk, time range, per-kind counts"
    static let usage = "boardwalk stats [--db DIR] [--format table|json]"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "table (default) or json"),
    ]
    static let discussion = ""
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        throw notAvailable(name, needs: "store")
    }
}

enum ExportCommand: Command {
    static let name = "export"
    static let summary = "Write the store's events as canonical NDJSON, CSV or a batch file"
    static let usage = "boardwalk export [--db DIR] [--format ndjson|csv|batch] [--since-seq N] [--output FILE]"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "ndjson (default), csv or batch"),
        OptionSpec("since-seq", value: "N", help: "Only events with a sequence number greater than N"),
        OptionSpec("output", short: "o", value: "FILE", help: "Write to FILE instead of stdout"),
    ]
    static let discussion = ""
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        throw notAvailable(name, needs: "store")
    }
}

enum CheckCommand: Command {
    static let name = "check"
    static let summary = "Verify the store's integrity"
    static let usage = "boardwalk check [--db DIR]"
    static let options = [databaseOption]
    static let discussion = ""
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        throw notAvailable(name, needs: "store")
    }
}

enum BackupCommand: Command {
    static let name = "backup"
    static let summary = "Write a compacted copy of the store while it stays in use"
    static let usage = "boardwalk backup [--db DIR] DEST"
    static let options = [databaseOption]
    static let discussion = ""
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        throw notAvailable(name, needs: "store")
    }
}

enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "Generate a few thousand sessions into the store and show what Boardwalk answers"
    static let usage = "boardwalk demo [--db DIR] [--sessions N]"
    static let options = [
        databaseOption,
        OptionSpec("sessions", short: "n", value: "N", help: "How many sessions to generate (default: 5000)"),
    ]
    static let discussion = ""
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        throw notAvailable(name, needs: "store and the query language")
    }
}
