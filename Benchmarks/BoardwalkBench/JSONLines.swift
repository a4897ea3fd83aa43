// The NDJSON every JSON benchmark reads: the generator's line writer (the project's definition of the
// shapes real sources produce), each line in a style drawn at random: wire, docs camelCase and snake_case,
// bridge; flat or wrapped envelope; every time key; epoch milliseconds or ISO-8601.
import BoardwalkGenerator
import BoardwalkModel

/// NDJSON text in one buffer, with where each line starts and ends (newline excluded).
struct JSONLines {
    var bytes: [UInt8] = []
    var lines: [Range<Int>] = []

    init(_ events: [Event], seed: UInt64 = 42) {
        var rng = SplitMix64(seed: seed)
        let writer = EventLineWriter()
        var line = ""
        bytes.reserveCapacity(events.count * 320)
        for event in events {
            line.removeAll(keepingCapacity: true)
            writer.write(event, style: .random(using: &rng), into: &line)
            let start = bytes.count
            bytes.append(contentsOf: line.utf8)
            // The writer ends each line with a newline; the range leaves it out.
            lines.append(start..<(bytes.count - 1))
        }
    }
}
