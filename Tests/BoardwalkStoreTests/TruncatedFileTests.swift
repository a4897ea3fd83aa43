import BoardwalkModel
import Foundation
import Testing

@testable import BoardwalkStore

/// A data file cut short (a partial copy) is refused at open with an error that says so: reading a page past the
/// end of the mapped file would be a bus error, which no later check could report.
@Suite struct TruncatedFileTests {
    @Test(arguments: [20_000, 4096, 0])
    func aCutShortDataFileIsRefusedAtOpen(keeping bytes: Int) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            for batch in 0..<20 {
                try store.append(
                    (0..<500).map {
                        simpleEvent(
                            onboarding: $0 % 5, screen: $0 % 7, session: batch * 500 + $0,
                            time: Int64(batch * 1000 + $0))
                    })
            }
            try store.sync()
            #expect(store.usedBytes > 100_000)
            store.close()
        }
        #expect(truncate(dir + "/data.mdb", off_t(bytes)) == 0)
        // Opened for writing, an empty file becomes a new store (a process killed right after creating it leaves
        // one; there was nothing in it to keep).
        for readOnly in bytes == 0 ? [true] : [true, false] {
            do {
                _ = try Store.open(at: dir, options: .init(readOnly: readOnly))
                Issue.record("a data.mdb cut to \(bytes) bytes opened (read-only: \(readOnly))")
            } catch let error as StoreError {
                #expect(error.kind == .corrupt, "\(error)")
                #expect("\(error)".contains("data.mdb is \(bytes) bytes"), "\(error)")
            }
        }
    }

    /// Both of LMDB's meta pages damaged: the store cannot be told from a file that is not LMDB at all, and the
    /// error names both ("is not a Boardwalk store" alone sends the reader to look for another directory).
    @Test func damagedMetaPagesAreNamed() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        do {
            let store = try Store.open(at: dir, options: .init(durability: .noSync))
            try store.append([simpleEvent(onboarding: 0, screen: 0, session: 0, time: 1)])
            store.close()
        }
        let fd = open(dir + "/data.mdb", O_WRONLY)
        try #require(fd >= 0)
        let junk = [UInt8](repeating: 0xFF, count: 4)
        for page in [0, 1] { _ = junk.withUnsafeBytes { pwrite(fd, $0.baseAddress, 4, off_t(page * 4096 + 16)) } }
        close(fd)
        for readOnly in [true, false] {
            let error = #expect(throws: StoreError.self) { try Store.open(at: dir, options: .init(readOnly: readOnly)) }
            #expect(error?.kind == .notAStore)
            #expect(error.map { "\($0)".contains("meta pages) are damaged") } == true, "\(String(describing: error))")
        }
    }

    /// A report of damage found before any event was read does not say "in 0 events" (which reads as an empty store).
    @Test func aReportSaysWhenNoEventCouldBeRead() {
        var report = CheckReport()
        report.add("events: page 7 has a bad header")
        #expect(
            report.description
                == "1 problem(s) (found before any event could be read):\n  events: page 7 has a bad header")
        report.eventsChecked = 10
        #expect(report.description.hasPrefix("1 problem(s) in 10 events checked:"))
    }

    /// Values LMDB returns are checked against the end of the file, which needs the map's address: found in
    /// `/proc/self/maps` after the map is made and after it grows. Every value a read returns must lie in the map
    /// found (a stale address would make the check pass everything, or refuse everything).
    @Test func theMapIsFoundSoThatValuesAreChecked() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync, initialMapSize: 1 << 16))
        var inside = 0, outside = 0
        // A tiny map grows several times; the base is found again after each move.
        for batch in 0..<12 {
            try store.append(
                (0..<300).map {
                    simpleEvent(
                        onboarding: $0 % 3, screen: $0 % 4, session: batch * 300 + $0, time: Int64(batch * 1000 + $0))
                })
            try store.foldLogs()
            try store.env.transaction(write: false) { txn in
                let base = store.env.mapBase
                #expect(base != 0)
                #expect(txn.file.mapStart == base)
                try txn.withCursor(store.dbs.events) { c in
                    var more = try c.first()
                    while more {
                        let a = UInt(bitPattern: c.value.baseAddress)
                        if a >= base && a < base + UInt(store.env.mapSize) { inside += 1 } else { outside += 1 }
                        more = try c.next()
                    }
                }
            }
        }
        #expect(store.mapSize > 1 << 16)
        #expect(inside > 0 && outside == 0, "values inside the found map: \(inside), outside: \(outside)")
    }
}
