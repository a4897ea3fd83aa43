import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import Testing

/// Every line the generator writes, in every shape, must read back (with the JSON layer's reader) to the event
/// the generator meant. A disagreement here is a disagreement about the shapes in `docs/events.md`.
@Suite("Generator lines read back with the JSON reader")
struct ReaderCrossCheckTests {
    @Test("Mixed corpus: every line reads back to its event")
    func mixedCorpus() throws {
        let reader = try EventReader()
        var failures: [String] = []
        var count = 0
        for (event, style, line) in SyntheticData(sessions: 200, seed: 77).lines() {
            count += 1
            let text = String(line.dropLast())
            do {
                let read = try reader.read(text, lineNumber: count, arrival: Timestamp(microseconds: 0))
                if read != event {
                    failures.append("\(style.shape)/\(style.layout): read \(read)\n  meant \(event)\n  line \(text)")
                }
            } catch {
                failures.append("\(style.shape)/\(style.layout): \(error)\n  line \(text)")
            }
        }
        #expect(count > 2_500)
        #expect(
            failures.isEmpty,
            "\(failures.count) of \(count) lines disagree; first:\n\(failures.prefix(5).joined(separator: "\n"))")
    }

    @Test(
        "Each shape and layout on its own", arguments: EventLineWriter.Shape.allCases, EventLineWriter.Layout.allCases)
    func shape(shape: EventLineWriter.Shape, layout: EventLineWriter.Layout) throws {
        let reader = try EventReader()
        var failures: [String] = []
        for (i, event) in SyntheticData(sessions: 25, seed: 5).events().enumerated() {
            for timeStyle in [EventLineWriter.TimeStyle.milliseconds, .iso8601] {
                let style = EventLineWriter.Style(
                    shape: shape, layout: layout, timeKey: EventLineWriter.Style.timeKeys[i % 4], timeStyle: timeStyle,
                    totalScreensAsAndroid: i % 5 == 0)
                let text = String(EventLineWriter().line(event, style: style).dropLast())
                do {
                    let read = try reader.read(text, lineNumber: i + 1, arrival: Timestamp(microseconds: 0))
                    if read != event { failures.append("read \(read)\n  meant \(event)\n  line \(text)") }
                } catch {
                    failures.append("\(error)\n  line \(text)")
                }
            }
        }
        #expect(
            failures.isEmpty, "\(failures.count) disagreements; first:\n\(failures.prefix(3).joined(separator: "\n"))")
    }

    @Test("The canonical writer's lines read back too (generated events)")
    func canonical() throws {
        let reader = try EventReader()
        for (i, event) in SyntheticData(sessions: 100, seed: 3).events().enumerated() {
            let line = CanonicalJSON.line(event)
            let read = try reader.read(
                line.hasSuffix("\n") ? String(line.dropLast()) : line, lineNumber: i + 1,
                arrival: Timestamp(microseconds: 0))
            #expect(read == event)
        }
    }
}
