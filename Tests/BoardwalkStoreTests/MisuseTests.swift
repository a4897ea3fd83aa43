import BoardwalkCodec
import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

// Calls an embedding app can make by mistake: each must fail at once on the calling thread with a StoreError that
// says what to do, never wait forever or surface a bare LMDB code.

/// Runs `body` on a thread of its own and returns its result, or `nil` when it has not finished after `seconds`: a
/// hang (the bug these tests guard against) fails the test instead of stopping the suite. Nothing is timed.
private func finishes<R>(within seconds: Double = 60, _ body: @escaping @Sendable () throws -> R) -> Result<
    R, any Error
>? {
    let done = DispatchSemaphore(value: 0)
    let box = Box<Result<R, any Error>>()
    Thread.detachNewThread {
        box.set(Result { try body() })
        done.signal()
    }
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return box.get()
}

/// A value handed from one thread to another.
private final class Box<T>: @unchecked Sendable {  // every access holds `lock`
    private let lock = NSLock()
    private var value: T?
    func set(_ v: T) { lock.withLock { value = v } }
    func get() -> T? { lock.withLock { value } }
}

private func event(_ i: Int, session: String? = nil, screen: Int? = nil) -> Event {
    Event(
        time: Timestamp(microseconds: Int64(i)), session: session ?? "s\(i % 7)", eventID: "e\(i)",
        meta: Meta(onboardingID: "o", screenClientID: "c", screenIndex: screen ?? i % 5, totalScreens: 5),
        payload: .analytics(.screenPresented))
}

@Suite struct NestedCallTests {
    @Test func appendOrWriteInsideWriteThrowsInsteadOfWaitingForever() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        // Not closed when the call hung: the close would wait for the hung transaction, and stop the suite.
        var returned = false
        defer { if returned { store.close() } }
        let outcome = finishes {
            try store.write { w in
                try w.append([event(1)])
                let append = #expect(throws: StoreError.self) { try store.append([event(2)]) }
                let write = #expect(throws: StoreError.self) { try store.write { try $0.append([event(3)]) } }
                // The checkpoint form goes through write too.
                let checkpointed = #expect(throws: StoreError.self) {
                    try store.append([], checkpoint: Checkpoint(key: "k", value: [1]))
                }
                return [append, write, checkpointed].map { ($0?.kind, $0?.message ?? "") }
            }
        }
        guard case .success(let errors)? = outcome else {
            Issue.record("store.append inside store.write did not return: \(String(describing: outcome))")
            return
        }
        returned = true
        for (kind, message) in errors {
            #expect(kind == .insideTransaction)
            #expect(
                message.contains("use the StoreWriter passed to write { }")
                    || message.contains("StoreWriter passed to write"), "\(message)")
        }
        // The outer transaction was not harmed: it committed its own append, and the store takes appends again.
        #expect(try store.read { try $0.stats().events } == 1)
        #expect(try store.append([event(4)]).appended == 1)
    }

    @Test func appendOrWriteInsideReadThrowsEvenWhenTheMapNeedNotGrow() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        // A tiny map: an append inside read would hang as soon as it had to grow it. It is refused whether or not it
        // would grow, so that code that works in a test does not hang in production.
        let store = try Store.open(at: dir, options: .init(initialMapSize: 1 << 16))
        // Not closed when the call hung: the close would wait for the hung transaction, and stop the suite.
        var returned = false
        defer { if returned { store.close() } }
        let outcome = finishes {
            try store.read { _ in
                let big = (0..<20_000).map { event($0, session: "session-\($0)-xxxxxxxxxxxxxxxxxxxxxxxx") }
                let append = #expect(throws: StoreError.self) { try store.append(big) }
                let small = #expect(throws: StoreError.self) { try store.append([event(1)]) }
                let write = #expect(throws: StoreError.self) { try store.write { _ in } }
                return [append, small, write].map { ($0?.kind, $0?.message ?? "") }
            }
        }
        guard case .success(let errors)? = outcome else {
            Issue.record("store.append inside store.read did not return: \(String(describing: outcome))")
            return
        }
        returned = true
        for (kind, message) in errors {
            #expect(kind == .insideTransaction)
            #expect(
                message.contains("inside store.read { }") && message.contains("after read { } returns"), "\(message)")
        }
        #expect(try store.read { try $0.stats().events } == 0)
    }

    @Test func readsNestInReadsAndWrites() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        var returned = false
        defer { if returned { store.close() } }
        try store.append([event(1)])
        let seen = try store.write { w in
            try w.append([event(2)])
            // A read inside write sees the last commit; the writer's snapshot sees the transaction's own writes.
            let committed = try store.read { outer in try store.read { _ in try outer.stats().events } }
            return (committed, try w.snapshot.stats().events)
        }
        #expect(seen.0 == 1 && seen.1 == 2)
        // An append inside a read nested in a write is refused as inside the write.
        let outcome = finishes {
            try store.write { _ in
                try store.read { _ in #expect(throws: StoreError.self) { try store.append([event(3)]) } }
            }
        }
        guard case .success(let error)? = outcome else {
            Issue.record("store.append inside read { } inside write { } did not return: \(String(describing: outcome))")
            return
        }
        returned = true
        #expect(error?.kind == .insideTransaction)
        #expect(error?.message.contains("StoreWriter") == true)
    }

    /// The detection is per thread: another thread's append while this one is inside `read { }` goes ahead (it would
    /// throw if the state were the store's), and one while this thread is inside `write { }` waits for its commit.
    @Test func otherThreadsAreNotRefused() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        let duringRead = try store.read { s in
            // Waits inside the read until the other thread's append has returned or thrown.
            let result = finishes { try store.append([event(1)]) }
            return (result, try s.stats().events)
        }
        guard case .success(let appended)? = duringRead.0 else {
            Issue.record("an append on another thread during a read failed: \(String(describing: duringRead.0))")
            return
        }
        #expect(appended.appended == 1)
        #expect(duringRead.1 == 0, "the read's snapshot predates the other thread's commit")

        let started = DispatchSemaphore(value: 0)
        let other = Box<Result<AppendResult, any Error>>()
        let finished = DispatchSemaphore(value: 0)
        try store.write { w in
            try w.append([event(2)])
            Thread.detachNewThread {
                started.signal()
                let result = Result { try store.append([event(3)]) }
                other.set(result)
                finished.signal()
            }
            started.wait()
        }
        #expect(finished.wait(timeout: .now() + 60) == .success)
        let result = try #require(other.get())
        // Blocked behind the write (or begun after it), never refused: its seq follows the write's.
        #expect(try result.get().seqs == 2..<3)
    }
}

@Suite struct CloseTests {
    @Test func closeInsideReadTakesEffectWhenTheReadReturns() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        try store.append([event(1), event(2)])
        let outcome = finishes {
            try store.read { s in
                try store.read { _ in store.close() }  // nested: the outermost read decides
                let stillValid = try s.stats().events  // the snapshot stays usable until read returns
                let refused = #expect(throws: StoreError.self) { try store.read { _ in } }
                return (stillValid, refused?.kind)
            }
        }
        guard case .success(let (events, refusedKind))? = outcome else {
            Issue.record("store.close() inside store.read did not return: \(String(describing: outcome))")
            return
        }
        #expect(events == 2)
        #expect(refusedKind == .closed, "a call begun after close() is refused")
        // Closed now: the path is free for a new Store, which sees what was stored.
        #expect(throws: StoreError.self) { try store.read { _ in } }
        let again = try Store.open(at: dir)
        defer { again.close() }
        #expect(try again.read { try $0.stats().events } == 2)
    }

    @Test func closeInsideWriteClosesAfterTheCommit() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        let outcome = finishes {
            try store.write { w in
                try w.append([event(1)])
                store.close()
                try w.append([event(2)])  // the writer stays usable until write returns
                return try w.snapshot.stats().events
            }
        }
        guard case .success(let seen)? = outcome else {
            Issue.record("store.close() inside store.write did not return: \(String(describing: outcome))")
            return
        }
        #expect(seen == 2)
        let error = #expect(throws: StoreError.self) { try store.append([event(3)]) }
        #expect(error?.kind == .closed)
        let again = try Store.open(at: dir)
        defer { again.close() }
        #expect(try again.read { try $0.stats().events } == 2, "the write committed before the close")
    }

    @Test func useAfterCloseThrowsClosed() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        try store.append([event(1)])
        store.close()
        store.close()  // a second close does nothing
        let calls: [(String, () throws -> Void)] = [
            ("read", { _ = try store.read { try $0.stats() } }),
            ("append", { try store.append([event(2)]) }),
            ("write", { try store.write { _ in } }),
            ("check", { _ = try store.check() }),
            ("backup", { try store.backup(to: dir + "-copy") }),
            ("sync", { try store.sync() }),
        ]
        for (name, call) in calls {
            let error = #expect(throws: StoreError.self, "\(name)") { try call() }
            #expect(error?.kind == .closed, "\(name)")
            #expect(error?.message.contains("is closed") == true, "\(name): \(String(describing: error))")
        }
        #expect(store.usedBytes == 0 && store.mapSize == 0)
        #expect(access(dir + "-copy", F_OK) != 0, "a refused backup creates nothing")
    }
}

@Suite struct RefusedEventTests {
    @Test func anUnencodableEventIsNamedByIndexIdAndSession() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        var batch = (0..<1000).map { event($0) }
        batch[613].meta!.screenIndex = 70_000
        let error = #expect(throws: StoreError.self) { try store.append(batch) }
        #expect(error?.kind == .invalidArgument)
        #expect(error?.batchIndex == 613)
        #expect((error?.underlying as? EncodingError) == EncodingError(.screenIndexOutOfRange(70_000)))
        let text = error.map { "\($0)" } ?? ""
        #expect(
            text.contains("event 613 of the batch") && text.contains("\"e613\"") && text.contains("\"s4\"")
                && text.contains("screen index 70000"), "\(text)")
        #expect(try store.read { try $0.stats().events } == 0, "nothing of the batch is stored")
    }

    /// The index counts every event of the sequence: duplicates (of stored events and within the batch) and events
    /// without a session before the refused one, and a sequence without contiguous storage.
    @Test func theIndexCountsDuplicatesAndInferredSessions() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        try store.append([event(0), event(1)])
        var noSession = event(5)
        noSession.session = nil
        var bad = event(6)
        bad.eventID = nil
        bad.session = "the bad one"
        bad.meta!.screenIndex = -1
        let batch = [event(0), event(2), event(1), event(2), noSession, event(3), bad, event(4)]
        let error = #expect(throws: StoreError.self) { try store.append(batch.lazy.map { $0 }) }
        #expect(error?.batchIndex == 6)
        #expect(
            error?.message.contains("event id none, session \"the bad one\"") == true, "\(String(describing: error))")

        // Inside write { }: the same error, and the transaction goes on.
        let result = try store.write { w in
            let inWrite = #expect(throws: StoreError.self) { try w.append(batch) }
            #expect(inWrite?.batchIndex == 6)
            return try w.append([event(7)])
        }
        #expect(result.appended == 1)
        #expect(try store.read { try $0.stats().events } == 3)
        #expect(try store.check().isOK)
    }
}

@Suite struct BackupTargetTests {
    @Test func backupRefusesANonEmptyDirectoryOrAFile() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir + "/store")
        defer { store.close() }
        try store.append([event(1)])
        try FileManager.default.createDirectory(atPath: dir + "/full", withIntermediateDirectories: false)
        try "keep me".write(toFile: dir + "/full/notes.txt", atomically: true, encoding: .utf8)
        let error = #expect(throws: StoreError.self) { try store.backup(to: dir + "/full") }
        #expect(error?.kind == .invalidArgument)
        #expect(error?.message.contains("is not empty (it holds notes.txt)") == true, "\(String(describing: error))")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir + "/full") == ["notes.txt"], "nothing was copied")

        let file = #expect(throws: StoreError.self) { try store.backup(to: dir + "/full/notes.txt") }
        #expect(file?.kind == .invalidArgument)
        #expect(file?.message.contains("is not a directory") == true)

        // A new directory and an existing empty one are both fine.
        try store.backup(to: dir + "/new")
        try FileManager.default.createDirectory(atPath: dir + "/empty", withIntermediateDirectories: false)
        try store.backup(to: dir + "/empty")
        for copy in ["/new", "/empty"] {
            let restored = try Store.open(at: dir + copy)
            #expect(try restored.read { try $0.stats().events } == 1)
            restored.close()
        }
    }
}
