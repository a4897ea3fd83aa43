// Peer: Foundation's JSONEncoder writing each event's wire shape (the Codable mirror) to its own Data.
import BoardwalkModel
import Foundation

final class FoundationJSONEncoderBench: Benchmark {
    let input: () -> [Event]
    private var values: [FoundationLine] = []

    init(input: @escaping () -> [Event]) { self.input = input }

    func setUp() throws { values = input().map(FoundationLine.init(wire:)) }

    func run() throws -> UInt64 {
        let encoder = JSONEncoder()
        var sum: UInt64 = 0
        for value in values {
            let data = try encoder.encode(value)
            sum &+= UInt64(data.count)
        }
        return sum
    }

    func tearDown() throws { values = [] }
}
