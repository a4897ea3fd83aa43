import BoardwalkModel
import BoardwalkQuery
import BoardwalkStore
import Foundation
import Testing

/// One `StoreEventSource` shared by concurrent tasks: it is `Sendable` (it holds only the `Sendable` store), so the
/// task group below compiles in Swift 6 mode.
@Suite struct StoreEventSourceSendableTests {
    @Test func oneSourceServesConcurrentTasks() async throws {
        // Not `withTemporaryStore`: its closure cannot await the task group.
        let dir = try temporaryStoreDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        _ = try store.append((0..<40).map { ev(Double($0), "s\($0 % 8)", screen: $0 % 4, presented) })
        let source = StoreEventSource(store)
        let query = try Query.parse("events | count")
        let counts = try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<4 { group.addTask { try query.run(on: source)[0, "count"]?.intValue } }
            var counts: [Int?] = []
            for try await count in group { counts.append(count) }
            return counts
        }
        #expect(counts == [40, 40, 40, 40])
    }
}
