// Peer: Foundation's JSONDecoder, one line at a time, into the Codable mirror of the shapes.
import Foundation

final class FoundationJSONDecoderBench: Benchmark {
    let input: () -> JSONLines
    private var lines: [Data] = []
    private(set) var inputBytes: Int?

    init(input: @escaping () -> JSONLines) { self.input = input }

    func setUp() throws {
        let text = input()
        // One Data per line, made before timing: the parse is measured, not the slicing.
        inputBytes = text.bytes.count
        lines = text.lines.map { Data(text.bytes[$0]) }
    }

    func run() throws -> UInt64 {
        let decoder = JSONDecoder()
        var sum: UInt64 = 0
        for line in lines {
            sum &+= try decoder.decode(FoundationLine.self, from: line).checksum
        }
        return sum
    }

    func tearDown() throws { lines = [] }
}
