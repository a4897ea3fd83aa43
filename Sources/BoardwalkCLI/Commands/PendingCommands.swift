// Commands whose layer (store, query) has not landed on this branch yet. Their help is final; running them
// fails honestly with exit status 1 instead of pretending.

func notAvailable(_ command: String, needs layer: String) -> RuntimeError {
    RuntimeError("'boardwalk \(command)' is not available yet: it needs the \(layer), which is not built into this version")
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


/// Opens the store for queries. The query layer on this branch has no store-backed event source yet, so
/// queries run only over `--generated` data for now.
func openStoreQuerySource(_ path: String) throws -> QuerySource {
    throw RuntimeError("querying a store is not available yet: the query layer merged here has no store-backed source; use --generated N to try the language")
}
