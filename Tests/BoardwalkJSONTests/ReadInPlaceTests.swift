import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import Testing

/// `read(line:readableAfter:)` parses a line where it lies in a larger buffer: it must read exactly what the
/// copying `read(line:)` reads, whatever bytes follow the line.
@Suite("Reading a line in place")
struct ReadInPlaceTests {
    @Test("Same events and same errors as the copying read, with any bytes after the line")
    func sameAsCopying() throws {
        let reader = try EventReader()
        let data = SyntheticData(sessions: 40, seed: 3, onboardings: 3)
        var rng = SplitMix64(seed: 9)
        let writer = EventLineWriter()
        var lines: [String] = []
        for event in data.events().prefix(300) {
            var line = ""
            writer.write(event, style: .random(using: &rng), into: &line)
            lines.append(String(line.dropLast()))  // without its newline
        }
        // Bad lines: a truncated object, a wrong type, trailing bytes, a quote left open at the line's end.
        lines += [
            #"{"type":"close","action_id":"#, #"{"type":"close","action_id":7,"meta":{}}"#, #"{} {}"#, #"{"a":""#,
        ]
        let arrival = Timestamp(microseconds: 1_000_000)
        var checked = 0, failures = 0
        for (i, line) in lines.enumerated() {
            // After the line: a newline and bytes that would be valid JSON continuations, then more padding.
            let trailer = "\n\"}]} {\"type\":\"close\"}" + String(repeating: "x", count: 80)
            let buffer = Array((line + trailer).utf8)
            let lineBytes = line.utf8.count
            let copied: Result<Event, JSONReadError>
            let inPlace: Result<Event, JSONReadError>
            do throws(JSONReadError) {
                copied = .success(try reader.read(line, lineNumber: i + 1, arrival: arrival))
            } catch { copied = .failure(error) }
            inPlace = buffer.withUnsafeBytes { raw in
                do throws(JSONReadError) {
                    return .success(
                        try reader.read(
                            line: UnsafeRawBufferPointer(rebasing: raw[0..<lineBytes]),
                            readableAfter: raw.count - lineBytes,
                            lineNumber: i + 1, arrival: arrival))
                } catch { return .failure(error) }
            }
            switch (copied, inPlace) {
            case (.success(let a), .success(let b)): #expect(a == b, "line \(i + 1)")
            case (.failure(let a), .failure(let b)):
                #expect(a.description == b.description, "line \(i + 1)")
                failures += 1
            default: Issue.record("line \(i + 1): \(copied) vs \(inPlace)")
            }
            checked += 1
        }
        #expect(checked == 304)
        #expect(failures == 4)  // the generated lines all read; the four bad ones all fail
    }
}
