import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import Testing

@Suite struct RoundTripTests {
    let arrival = Timestamp(microseconds: 1_793_527_200_000_000)

    @Test func randomEventsSurviveTheCanonicalLine() throws {
        let reader = try EventReader()
        var events = RandomEvents(seed: 42)
        var buffer: [UInt8] = []
        for n in 0..<5000 {
            let event = events.event()
            buffer.removeAll(keepingCapacity: true)
            CanonicalJSON.write(event, into: &buffer)
            let back = try buffer.withUnsafeBytes { bytes in
                try #require(
                    try? reader.read(line: bytes, lineNumber: n + 1, arrival: arrival),
                    "line \(n + 1) rejected: \(String(decoding: buffer, as: UTF8.self))")
            }
            #expect(back == event, "line \(n + 1): \(String(decoding: buffer, as: UTF8.self))")
            if back != event { break }
        }
    }
}
