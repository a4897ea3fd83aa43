import BoardwalkGenerator
import BoardwalkModel
import BoardwalkQuery
import Foundation
import Testing

@testable import BoardwalkCLI

/// Records each write separately; can raise a cancellation flag at a given write (Ctrl-C while the result is
/// being printed, after the query's read has finished).
final class RecordingSink: OutputSink {
    private(set) var writes: [String] = []
    let cancelAtWrite: Int?
    let flag: CancellationFlag?
    init(cancelAtWrite: Int? = nil, flag: CancellationFlag? = nil) {
        self.cancelAtWrite = cancelAtWrite
        self.flag = flag
    }
    var text: String { writes.joined() }
    func write(_ text: String) {
        writes.append(text)
        if writes.count == cancelAtWrite { flag?.cancel() }
    }
    func write(bytes: [UInt8]) { write(String(decoding: bytes, as: UTF8.self)) }
    func flush() {}
}

@Suite("Query output: streamed in chunks, cancellable while printing")
struct QueryOutputTests {
    static let source = InMemoryEventSource(Array(SyntheticData(sessions: 300, seed: 3).events()))

    @Test(
        "Ctrl-C while a long result is printed stops the output and reports cancelled",
        arguments: ResultTable.Format.allCases)
    func cancelWhilePrinting(format: ResultTable.Format) throws {
        let flag = CancellationFlag()
        let out = RecordingSink(cancelAtWrite: 1, flag: flag), err = BufferSink()
        let console = QueryConsole(
            source: QueryOutputTests.source, invocation: Invocation(environment: [:], stdout: out, stderr: err),
            cancellation: flag)
        console.format = format
        let total = try console.execute(try Query.parse("events")).table.rows.count
        #expect(total > 5_000)
        let succeeded = console.run("events")
        #expect(!succeeded)
        #expect(err.text == "cancelled\n")
        // The first chunk went out before the flag was seen; nothing after it.
        #expect(out.writes.count == 1)
        #expect(out.text.split(separator: "\n").count < total / 2)
    }

    @Test("Ctrl-C during one of the queries read from a pipe stops the run there, with status 130")
    func cancelPipedRun() {
        let flag = CancellationFlag()
        let out = RecordingSink(cancelAtWrite: 1, flag: flag), err = BufferSink()
        let invocation = Invocation(environment: [:], stdout: out, stderr: err)
        let console = QueryConsole(source: QueryOutputTests.source, invocation: invocation, cancellation: flag)
        let repl = Repl(console: console, invocation: invocation, completionWords: [], stats: nil)
        let status = repl.runPiped(["events", "sessions | count"])
        #expect(status == ExitCode.interrupted)
        #expect(err.text == "cancelled\n")
        #expect(!out.text.contains("count\n-----"), "the query after the cancelled one ran")
    }

    @Test(
        "The streamed output is the table's rendering, byte for byte, in several writes",
        arguments: ResultTable.Format.allCases)
    func streamedEqualsRendered(format: ResultTable.Format) throws {
        let out = RecordingSink(), err = BufferSink()
        let console = QueryConsole(
            source: QueryOutputTests.source, invocation: Invocation(environment: [:], stdout: out, stderr: err))
        console.format = format
        for query in ["events", "sessions", "events | count by kind", "events | where name == \"nothing\""] {
            let table = try console.execute(try Query.parse(query)).table
            let before = out.writes.count
            #expect(console.run(query), "\(err.text)")
            let written = out.writes[before...].joined()
            #expect(written == table.render(format), "\(query)")
            if table.rows.count > 2 * ResultPrinter.rowsPerChunk {
                #expect(out.writes.count - before > 2, "\(query): one giant write")
            }
        }
    }
}

@Suite("Chunked rendering against the query layer's")
struct ResultPrinterTests {
    static let pool: [Value] = [
        .null, .bool(true), .bool(false), .integer(-42), .integer(Int64.max), .integer(0), .number(3.14159265),
        .number(-0.00001), .number(-0.00004), .number(.nan), .number(.infinity), .number(-.infinity), .number(1e15),
        .number(123_456_789.125), .number(-2.5), .duration(1_500_000), .duration(-0.4), .duration(86_400e6),
        .string("a\tb\nc\u{7}\u{7F}"), .string("中文 wide"), .string("trailing  "), .string(""), .string("e\u{301}"),
        .time(Timestamp(microseconds: 1_700_000_000_123_456)), .set([]), .set(["x", "y\nz"]),
    ]
    static let numbers: [Value] = pool.filter {
        switch $0 {
        case .integer, .number, .duration, .null: true
        default: false
        }
    }

    @Test("Random tables of every kind of cell, in chunks of 1 to 5 rows: the same bytes as render(format)")
    func randomTables() {
        var rng = SplitMix64(seed: 9)
        for _ in 0..<200 {
            let columns = Int.random(in: 1...4, using: &rng)
            // Some columns hold only numbers (aligned right), others anything.
            let kinds = (0..<columns).map { _ in
                Bool.random(using: &rng) ? ResultPrinterTests.numbers : ResultPrinterTests.pool
            }
            let names = (0..<columns).map {
                ["count", "p50(dwell)", "名前", "", "answer(\"goal\")"][Int.random(in: 0..<5, using: &rng)] + "\($0)"
            }
            let rows = (0..<Int.random(in: 0...12, using: &rng)).map { _ in kinds.map { $0.randomElement(using: &rng)! }
            }
            let table = ResultTable(columns: names, rows: rows)
            for format in ResultTable.Format.allCases {
                let out = RecordingSink()
                #expect(
                    ResultPrinter.print(table, format, to: out, rowsPerChunk: Int.random(in: 1...5, using: &rng)) {
                        false
                    })
                #expect(out.text == table.render(format), "\(format) \(rows)")
            }
        }
    }
}
