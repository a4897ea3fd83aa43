import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import Testing

/// Chunked NDJSON gives the same per-line results as reading each line alone, whatever the chunk size.
@Suite struct StreamingTests {
    static func corpus() -> (text: [UInt8], lines: [String]) {
        var events = RandomEvents(seed: 7)
        var lines: [String] = []
        for i in 0..<400 {
            switch i % 50 {
            case 13: lines.append("")
            case 27: lines.append(#"{"type":"nope","meta":\#(metaJSON)}"#)
            case 31: lines.append(#"{"type":"close","action_id":"x","meta":\#(metaJSON)}"# + "\r")
            default: lines.append(CanonicalJSON.line(events.event()))
            }
        }
        return (Array(lines.joined(separator: "\n").utf8), lines)
    }

    static func describe(_ r: Result<Event, JSONReadError>) -> String {
        switch r {
        case .success(let e): "\(e)"
        case .failure(let e): e.description
        }
    }

    @Test(arguments: [1, 7, 63, 64, 65, 4096, 1 << 30])
    func chunkedMatchesLineByLine(chunk: Int) throws {
        let (text, lines) = Self.corpus()
        let single = try EventReader()
        let expected = lines.enumerated().map { n, line in
            Self.describe(
                Result { () throws(JSONReadError) -> Event in try single.read(line, lineNumber: n + 1, arrival: arrival)
                })
        }
        let stream = NDJSONStream(reader: try EventReader())
        var got: [(Int, String)] = []
        var start = 0
        while start < text.count {
            let end = min(text.count, start + chunk)
            text[start..<end].withUnsafeBytes { bytes in
                stream.feed(bytes, arrival: arrival) { line, result in got.append((line, Self.describe(result))) }
            }
            start = end
        }
        stream.finish(arrival: arrival) { line, result in got.append((line, Self.describe(result))) }
        #expect(got.count == lines.count)
        #expect(got.map(\.0) == Array(1...lines.count))
        for (i, (_, text)) in got.enumerated() where i < expected.count {
            #expect(text == expected[i], "line \(i + 1)")
        }
        #expect(stream.linesRead == lines.count)
    }

    @Test func readLinesReportsWhatItConsumed() throws {
        let reader = try EventReader()
        let text = Array((#"{"type":"onboarding_loaded","meta":\#(metaJSON)}"# + "\n" + #"{"type":"onbo"#).utf8)
        var seen: [Int] = []
        let (consumed, count) = text.withUnsafeBytes { bytes in
            reader.readLines(in: bytes, firstLine: 10, arrival: arrival, isFinal: false) { line, result in
                seen.append(line)
                #expect((try? result.get()) != nil)
            }
        }
        #expect(seen == [10])
        #expect(count == 1)
        #expect(consumed == text.firstIndex(of: 0x0A)! + 1)
    }
}
