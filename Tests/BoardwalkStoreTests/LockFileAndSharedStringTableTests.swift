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
    /// 8 KiB is its 126 reader slots; a 16 KiB file gives 254 (`mdb_env_get_maxreaders`, checked with a C probe).
    /// A first version of `reserveLockFile` extended every lock file shorter than 16 KiB, also one in use by another
    /// process that mapped 8 KiB and believes there are 126 slots (an earlier Boardwalk, `mdb_stat`): a reader slot
    /// at 126 or above that this process takes lies outside that process's map, which then registers its own readers
    /// past its map (outside the shared file: a writer does not see them and may reuse their pages). On a full disk
    /// the growth also failed with ENOSPC, so a store with an 8 KiB lock file could no longer be opened, even
    /// read-only, although liblmdb would not have written any unallocated block of it.
    ///
    /// Expected: a lock file liblmdb already sized is left at its size (only holes in it may be filled).
    @Test(arguments: [false, true])
    func anExistingLockFileKeepsLiblmdbsSize(readOnly: Bool) throws {
        let dir = temporaryDirectory("\(#function)-\(readOnly)")
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 1, time: 1)])
            store.close()
        }
        // What liblmdb itself leaves (126 readers): 8 KiB.
        #expect(truncate(dir + "/lock.mdb", 8 << 10) == 0)
        let store = try Store.open(at: dir, options: .init(readOnly: readOnly))
        defer { store.close() }
        var st = stat()
        #expect(stat(dir + "/lock.mdb", &st) == 0)
        #expect(st.st_size == 8 << 10, "lock.mdb grew to \(st.st_size) bytes while the store was opened")
        #expect(try store.read { try $0.stats().events } == 1)
    }

    /// A new store's lock file is the size liblmdb would give it (126 reader slots, as docs/storage.md says), with
    /// its blocks reserved: reserving more changes the reader count of every store this version creates.
    @Test func aNewLockFileHasLiblmdbsSizeAndItsBlocks() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        var st = stat()
        #expect(stat(dir + "/lock.mdb", &st) == 0)
        #expect(st.st_size == 8 << 10, "\(st.st_size) bytes")
        #expect(Int(st.st_blocks) * 512 >= Int(st.st_size), "\(st.st_blocks) blocks")
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
