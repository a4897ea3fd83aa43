import BoardwalkCodec
import BoardwalkModel
import Foundation
import Synchronization
import Testing

@testable import BoardwalkStore

#if canImport(Glibc)
    import Glibc
#endif

/// The lock file's reserved blocks (liblmdb writes `lock.mdb` through a memory map after sizing it with `ftruncate`:
/// on a full disk that write was a bus error), and the readers' shared string table and its damage.
@Suite struct LockFileAndSharedStringTableTests {
    /// liblmdb sizes its reader table from the lock file's size when the file is at least the size it would make:
    /// 8 KiB is 126 reader slots (its default), 65 664 bytes the 1 024 the store asks for. A lock file in use by
    /// another process (one that mapped 8 KiB and believes there are 126 slots: an earlier Boardwalk) must keep its
    /// size: a slot at 126 or above that this process took would lie outside that process's map, which would then
    /// register its own readers past its map (outside the shared file: a writer does not see them and may reuse
    /// their pages). liblmdb grows the file only when it opens it alone (its exclusive `fcntl` lock on byte 0), and
    /// the store reserves no more than the file's own length before `mdb_env_open`.
    ///
    /// Expected: with another process holding the file (a shared lock on byte 0, as every opener holds), an 8 KiB
    /// lock file stays 8 KiB and this process uses 126 slots; opened alone, it grows to 1 024 slots, its blocks
    /// reserved.
    @Test(arguments: [false, true])
    func anExistingLockFileKeepsItsSizeWhileAnotherProcessHasItOpen(readOnly: Bool) throws {
        let dir = temporaryDirectory("\(#function)-\(readOnly)")
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1)])
            store.close()
        }
        // What liblmdb itself leaves (126 readers) when no size is asked: 8 KiB, as an older Boardwalk made it.
        #expect(truncate(dir + "/lock.mdb", 8 << 10) == 0)
        do {
            // Another process with the store open: it holds a shared lock on byte 0 until its stdin closes.
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            holder.arguments = [
                "-c",
                "import fcntl,sys; f=open(sys.argv[1],'r+b'); fcntl.lockf(f, fcntl.LOCK_SH, 1, 0); "
                    + "print('locked', flush=True); sys.stdin.read()",
                dir + "/lock.mdb",
            ]
            let input = Pipe(), output = Pipe()
            holder.standardInput = input
            holder.standardOutput = output
            try holder.run()
            defer {
                try? input.fileHandleForWriting.close()
                holder.waitUntilExit()
            }
            let said = output.fileHandleForReading.availableData
            #expect(String(decoding: said, as: UTF8.self).hasPrefix("locked"))
            let store = try Store.open(at: dir, options: .init(readOnly: readOnly))
            defer { store.close() }
            var st = stat()
            #expect(stat(dir + "/lock.mdb", &st) == 0)
            #expect(st.st_size == 8 << 10, "lock.mdb grew to \(st.st_size) bytes while another process had it open")
            #expect(store.maxReaders == 126)
            #expect(try store.read { try $0.stats().events } == 1)
        }
        // Opened alone, the store takes the larger table.
        let store = try Store.open(at: dir, options: .init(readOnly: readOnly))
        defer { store.close() }
        var st = stat()
        #expect(stat(dir + "/lock.mdb", &st) == 0)
        #expect(st.st_size == 65_664, "\(st.st_size) bytes")
        #expect(Int(st.st_blocks) * 512 >= Int(st.st_size), "\(st.st_blocks) blocks")
        #expect(store.maxReaders == 1_024)
    }

    /// A new store's lock file holds 1 024 reader slots (65 664 bytes: liblmdb's 192-byte header and 1 023 more
    /// slots of 64), with its blocks reserved: a full disk is an error at open, not a bus error at a later reader.
    @Test func aNewLockFileHoldsTheLargerReaderTableAndItsBlocks() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        var st = stat()
        #expect(stat(dir + "/lock.mdb", &st) == 0)
        #expect(st.st_size == 65_664, "\(st.st_size) bytes")
        #expect(Int(st.st_blocks) * 512 >= Int(st.st_size), "\(st.st_blocks) blocks")
        #expect(store.maxReaders == 1_024)
    }

    /// More read transactions than liblmdb's default table (126) are open at once; past the store's 1 024 a new read
    /// fails with an error that names the limit, and once they end the store reads and appends again.
    @Test func moreReadersThanTheDefaultTableAndTheErrorPastTheLimit() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1)])
        final class Outcome: @unchecked Sendable {
            var deepest = 0, openAtDepth200 = 0
            var error: StoreError? = nil
        }
        let outcome = Outcome()
        // Nested reads, each its own read transaction, on a thread with room for 1 100 frames.
        @Sendable func nest(_ depth: Int) {
            do {
                try store.read { snapshot in
                    outcome.deepest = depth
                    if depth == 200 { outcome.openAtDepth200 = store.readers.open }
                    _ = try snapshot.stats()
                    nest(depth + 1)
                }
            } catch let error as StoreError {
                outcome.error = error
            } catch {}
        }
        let done = DispatchSemaphore(value: 0)
        let runner = Thread {
            nest(1)
            done.signal()
        }
        runner.stackSize = 256 << 20
        runner.start()
        done.wait()
        #expect(outcome.openAtDepth200 >= 200)
        #expect(outcome.deepest == 1_024)
        let error = try #require(outcome.error)
        #expect(error.kind == .lmdb)
        #expect(error.message.contains("MDB_READERS_FULL"), "\(error.message)")
        #expect(error.message.contains("all 1024 slots of the reader table"), "\(error.message)")
        // The table is free again: reads and appends go on.
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 2)])
        #expect(try store.read { try $0.stats().events } == 2)
    }

    /// `refresh` reads the last strings chunk before every batch, so a loaded writer now refuses to
    /// append to a store whose last strings key is malformed (as a fresh writer already did). The refusal is
    /// `corrupt` and names the damage; the events stay readable (`fallbackStringCount`).
    @Test func aMalformedLastStringsKeyRefusesAppendsAsCorrupt() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync))
        defer { store.close() }
        try store.append((0..<10).map { i in simpleEvent(onboarding: 0, screen: 0, session: i, time: Int64(i)) })
        try store.env.transaction(write: true) { txn in
            _ = try [UInt8]([0xFF, 0xFF, 0xFF, 0xFF, 0]).withUnsafeBytes { k in
                try [UInt8]([1, 0]).withUnsafeBytes { try txn.put(store.dbs.strings, k, $0) }
            }
        }
        let error = #expect(throws: StoreError.self) {
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 99, time: 99)])
        }
        #expect(error?.kind == .corrupt)
        #expect(error?.description.contains("strings") == true, "\(error.map { "\($0)" } ?? "")")
        // It says what is refused and what to do, not only which key is malformed.
        #expect(error?.description.hasPrefix("cannot write: the store's string dictionary is damaged") == true)
        #expect(error?.description.contains("boardwalk check") == true)
        try store.read { s in
            let events = try s.events(since: 0).count
            #expect(events == 10)
        }
    }

    /// The readers' table is shared by every snapshot: lookups from several threads, each in its own read
    /// transaction, load it (after enough walks) while others read it, and every answer is the stored string.
    @Test func stringForFromManyThreadsWhileTheTableLoads() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let sessions = (0..<2_000).map { i in i % 2 == 0 ? UUID().uuidString : "session \(i)" }
        let store = try reopenedStore(at: dir, holding: sessions)
        defer { store.close() }
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            do {
                try store.read { s in
                    for k in 0..<sessions.count {
                        let i = (k * 7 + t * 501) % sessions.count
                        if s.string(for: StringID(i)) != sessions[i] { wrong.withLock { $0 += 1 } }
                    }
                }
            } catch {
                wrong.withLock { $0 += 1_000_000 }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
    }
}
