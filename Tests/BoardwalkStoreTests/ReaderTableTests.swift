import BoardwalkModel
import Dispatch
import Foundation
import Testing

@testable import BoardwalkStore

/// `Store.readers`: the read transactions open now and how many commits the oldest is behind.
@Suite struct ReaderTableTests {
    @Test func aLongReaderIsCountedWithTheCommitsItIsBehind() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1)])
        #expect(store.readers == ReaderTable(open: 0, oldestCommitsBehind: nil))
        let seen: ReaderTable = try store.read { _ in
            // Two commits by another thread while this snapshot stays open.
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var failure: (any Error)? = nil
            Thread.detachNewThread {
                do {
                    try store.append([simpleEvent(onboarding: 0, screen: 0, session: 2, time: 2)])
                    try store.append([simpleEvent(onboarding: 0, screen: 0, session: 3, time: 3)])
                } catch {
                    failure = error
                }
                done.signal()
            }
            done.wait()
            if let failure { throw failure }
            return store.readers
        }
        #expect(seen == ReaderTable(open: 1, oldestCommitsBehind: 2))
        #expect(store.readers == ReaderTable(open: 0, oldestCommitsBehind: nil))
    }
}
