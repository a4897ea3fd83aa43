import Boardwalk

/// Opens the store for `query`, `repl` and `demo`.
func openStoreQuerySource(_ path: String, notes: Invocation? = nil) throws -> QuerySource {
    let store = try openStore(path, readOnly: true, notes: notes)
    let onboardings = try store.read { try $0.onboardings() }
    return QuerySource(
        source: StoreEventSource(store),
        completionWords: onboardings.compactMap { $0.onboardingID.map { "\"\($0)\"" } },
        stats: {
            let stats = try store.read { try $0.stats() }
            let unfolded = try? store.read { try $0.unfoldedBatches() }
            return StatsCommand.statsTable(
                stats, unfolded: unfolded, fileBytes: store.usedBytes, paint: Paint(enabled: false))
        })
}
