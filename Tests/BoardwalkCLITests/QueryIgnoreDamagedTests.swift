import BoardwalkGenerator
import Foundation
import Testing

@testable import BoardwalkStore

/// `boardwalk query --ignore-damaged` (and the REPL's `.ignore-damaged on`) on a store with one flipped bit in a
/// block of its file: without it the query stops naming the block; with it the query answers from the other
/// blocks and a note on stderr says what it skipped and where.
@Suite struct QueryIgnoreDamagedTests {
    @Test func aQueryReadsAroundABlockWithAFlippedBit() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("store").path
        let ingest = try boardwalk(
            ["ingest", "--db", db, "-q", "--batch", "200", "-"], stdin: Corpus(sessions: 60, seed: 29).text)
        #expect(ingest.status == 0, "\(ingest.stderr)")

        // The largest block of `events`, its bytes as they lie in the file, and the seqs of its events.
        let (bytes, lost, total, group) = try {
            let store = try Store.open(at: db)
            defer { store.close() }
            return try store.read { snapshot in
                var blocks: [(key: EventKey, value: [UInt8])] = []
                try snapshot.txn.withCursor(snapshot.dbs.events) { c in
                    var more = try c.first()
                    while more {
                        blocks.append((try #require(EventKey(c.key)), Array(c.value)))
                        more = try c.next()
                    }
                }
                let (key, value) = try #require(blocks.max { $0.value.count < $1.value.count })
                var lost = 0
                try value.withUnsafeBytes { raw in
                    var block = try blockReader(key, raw)
                    while try advance(&block, key) { lost += 1 }
                }
                let onboarding = try #require(snapshot.string(for: key.onboarding))
                return (value, lost, try snapshot.stats().events, "onboarding \"\(onboarding)\", screen \(key.screen)")
            }
        }()
        #expect(lost > 0 && lost < total)
        // One bit of the block's last byte (a record body's), in the file itself: in every copy of the block (the
        // event log's copy of a folded batch stays in a free page).
        let path = db + "/data.mdb"
        var file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var from = 0, copies = 0
        while let start = Self.firstIndex(of: bytes, in: file, from: from) {
            file[start + bytes.count - 1] ^= 0x04
            copies += 1
            from = start + bytes.count
        }
        #expect(copies >= 1)
        try Data(file).write(to: URL(fileURLWithPath: path))

        // A count from the blocks' headers reads no event: the damaged block's header, whose own checksum holds, counts.
        let headers = try boardwalk(["query", "--db", db, "--format", "csv", "events | count"])
        #expect(headers.status == 0 && headers.stdout == "count\n\(total)\n", "\(headers.stdout)\(headers.stderr)")

        // A query that reads the events stops at the damaged block, naming it.
        let reading = #"events | where session != "x" | count"#
        let stopped = try boardwalk(["query", "--db", db, reading])
        #expect(stopped.status == 1, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("is damaged") && stopped.stderr.contains(group), "\(stopped.stderr)")
        #expect(stopped.stdout.isEmpty)

        let around = try boardwalk(["query", "--db", db, "--ignore-damaged", "--format", "csv", reading])
        #expect(around.status == 0, "\(around.stderr)")
        #expect(around.stdout == "count\n\(total - lost)\n", "\(around.stdout)")
        #expect(around.stderr.contains("note: the answer leaves out 1 damaged block"), "\(around.stderr)")
        #expect(around.stderr.contains("\(lost) event\(lost == 1 ? "" : "s") skipped"), "\(around.stderr)")
        #expect(around.stderr.contains(group), "\(around.stderr)")

        // Sessions read through the index skip the block's events too, and the REPL's setting does what the flag does.
        let repl = try boardwalk(
            ["query", "--db", db, "--format", "csv", "-"],
            stdin: ".ignore-damaged on\n.ignore-damaged\nsessions | stats sum(events)\n")
        #expect(repl.status == 0, "\(repl.stderr)")
        #expect(repl.stdout.contains("ignore-damaged: on"), "\(repl.stdout)")
        #expect(repl.stdout.contains("sum(events)\n\(total - lost)\n"), "\(repl.stdout)")
        #expect(repl.stderr.contains("damaged block"), "\(repl.stderr)")
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count - from else { return nil }
        for i in from...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }
}
