// Peer: Foundation's JSONSerialization, one line at a time, reading the fields an ingester needs first
// (kind, name, session, screen index) out of the dictionaries.
import Foundation

final class FoundationJSONSerializationBench: Benchmark {
    let input: () -> JSONLines
    private var lines: [Data] = []
    private(set) var inputBytes: Int?

    init(input: @escaping () -> JSONLines) { self.input = input }

    func setUp() throws {
        let text = input()
        inputBytes = text.bytes.count
        lines = text.lines.map { Data(text.bytes[$0]) }
    }

    func run() throws -> UInt64 {
        var sum: UInt64 = 0
        for line in lines {
            guard let object = try JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                throw BenchError("JSONSerialization: a line is not an object")
            }
            let wrapped = object["event"] as? [String: Any]
            let meta = (object["meta"] ?? wrapped?["meta"]) as? [String: Any]
            let screen = (meta?["screen_index"] ?? meta?["screenIndex"]) as? Int ?? 0
            let kind =
                (object["type"] ?? object["kind"] ?? object["name"]) as? String
                ?? (wrapped?["type"] ?? wrapped?["name"]) as? String ?? ""
            let session = object["session_id"] as? String ?? (object["view"] as? [String: Any])?["id"] as? String ?? ""
            sum &+= UInt64(screen) &+ UInt64(kind.utf8.count) &+ UInt64(session.utf8.count)
        }
        return sum
    }

    func tearDown() throws { lines = [] }
}
