// Boardwalk's JSON reader (simdjson On-Demand underneath): every line of an NDJSON buffer to an owned
// `Event`, lines parsed in place, several passes per run.
import BoardwalkJSON
import BoardwalkModel

final class JSONReaderBench: Benchmark {
    let input: () -> JSONLines
    let passes: Int
    private var bytes: [UInt8] = []
    private var reader: EventReader?
    private(set) var inputBytes: Int?
    private var rejected = 0

    init(passes: Int, input: @escaping () -> JSONLines) {
        self.passes = passes
        self.input = input
    }

    func setUp() throws {
        bytes = input().bytes
        inputBytes = bytes.count * passes
        reader = try EventReader()
    }

    func run() throws -> UInt64 {
        let reader = reader!
        let arrival = Timestamp(microseconds: 1_793_491_200_000_000)
        var sum: UInt64 = 0
        var rejected = 0
        bytes.withUnsafeBytes { buffer in
            for _ in 0..<passes {
                reader.readLines(in: buffer, arrival: arrival) { _, result in
                    switch result {
                    case .success(let event):
                        sum &+= UInt64(bitPattern: event.time.microseconds) &+ UInt64(event.meta?.screenIndex ?? 0)
                    case .failure:
                        rejected += 1
                    }
                }
            }
        }
        self.rejected = rejected
        // A benchmark of lines the reader rejects would measure error paths, not reading.
        if rejected > 0 { throw BenchError("the JSON reader rejected \(rejected / passes) of the generated lines") }
        return sum
    }

    func tearDown() throws {
        bytes = []
        reader = nil
    }
}
