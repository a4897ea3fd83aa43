import BoardwalkGenerator
import BoardwalkModel
import Foundation
import Testing

@Suite("NDJSON line writer")
struct EventLineWriterTests {
    private func object(_ line: String) throws -> [String: Any] {
        #expect(line.hasSuffix("\n"))
        #expect(!line.dropLast().contains("\n"))
        let any = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(any as? [String: Any])
    }

    @Test("Strings are escaped: quotes, backslashes, control characters, non-ASCII kept")
    func escaping() throws {
        let awkward = "a\"b\\c\n\t\r\u{8}\u{C}\u{0}\u{1F}\u{7F}é日本\u{1F600}"
        let event = Event(
            time: Timestamp(milliseconds: 1_793_491_200_123), session: awkward,
            meta: Meta(onboardingID: awkward, screenClientID: "s", screenIndex: 0, totalScreens: 1),
            payload: .custom(actionID: awkward))
        for shape in EventLineWriter.Shape.allCases {
            let line = EventLineWriter().line(event, style: .init(shape: shape))
            let o = try object(line)
            #expect(
                line.contains(#"\u0000"#) && line.contains(#"\u001f"#) && line.contains(#"\b"#) && line.contains(#"\f"#)
            )
            let session =
                shape == .bridge ? (o["view"] as? [String: Any])?["id"] as? String : o["session_id"] as? String
            #expect(session == awkward)
        }
    }

    @Test("Every generated line is one JSON object whose envelope matches its event")
    func envelopes() throws {
        var shapes = Set<EventLineWriter.Shape>(), layouts = Set<EventLineWriter.Layout>(), keys = Set<String>()
        var isoTimes = 0, numberTimes = 0
        for (event, style, line) in SyntheticData(sessions: 150, seed: 21).lines() {
            let o = try object(line)
            shapes.insert(EventLineWriter.effectiveShape(of: event, requested: style.shape))
            layouts.insert(style.layout)
            keys.insert(style.timeKey)
            switch o[style.timeKey] {
            case let s as String:
                isoTimes += 1
                #expect(Timestamp(iso8601: s) == event.time)
            case let n as NSNumber:
                numberTimes += 1
                #expect(Timestamp(milliseconds: n.int64Value) == event.time)
            default:
                Issue.record("no time under \(style.timeKey) in \(line)")
            }
            #expect(o["event_id"] as? String == event.eventID)
            #expect(o["profile_id"] as? String == event.profile)
            let message = style.layout == .wrapped && style.shape != .bridge ? o["event"] as? [String: Any] ?? [:] : o
            if style.shape == .bridge, event.kind != .error {
                #expect((o["view"] as? [String: Any])?["id"] as? String == event.session)
            } else {
                #expect(o["session_id"] as? String == event.session)
            }
            // `kind` is in the envelope exactly when the message's shape does not say the kind.
            let shape = EventLineWriter.effectiveShape(of: event, requested: style.shape)
            let saysKind =
                (shape == .wire && event.kind != .error)
                || event.kind == .analytics || event.kind == .stateUpdated
            #expect((o["kind"] as? String) == (saysKind ? nil : event.kind.name))
            if shape == .wire, event.kind != .error { #expect(message["type"] as? String == event.kind.name) }
            let meta = message["meta"] as? [String: Any]
            #expect((meta != nil) == (event.meta != nil))
            if let meta, let m = event.meta {
                let index = (meta["screen_index"] ?? meta["screenIndex"]) as? Int
                #expect(index == m.screenIndex)
                let id = (meta["onboarding_id"] ?? meta["onboardingId"]) as? String
                #expect(id == m.onboardingID)
            }
        }
        #expect(shapes == Set(EventLineWriter.Shape.allCases))
        #expect(layouts == Set(EventLineWriter.Layout.allCases))
        #expect(keys == Set(EventLineWriter.Style.timeKeys))
        #expect(isoTimes > 0 && numberTimes > 0)
    }

    @Test("State values in each shape: element type spellings and value forms")
    func stateValues() throws {
        let meta = Meta(onboardingID: "o", screenClientID: "s", screenIndex: 1, totalScreens: 3)
        let cases: [(StateValue, wire: String, docs: String)] = [
            (.select(Choice(id: "1", value: "v", label: "L")), "select", "select"),
            (.multiSelect([]), "multi_select", "multiSelect"),
            (.input(.number(25)), "input", "input"),
            (.datePicker(DateParts(year: 1995)), "date_picker", "datePicker"),
        ]
        for (value, wireType, docsType) in cases {
            let event = Event(
                time: Timestamp(milliseconds: 5), meta: meta,
                payload: .stateUpdated(StateUpdate(elementID: "e", value: value)))
            let wire = try object(EventLineWriter().line(event, style: .init(shape: .wire)))
            #expect(wire["element_type"] as? String == wireType)
            let camel = try object(EventLineWriter().line(event, style: .init(shape: .docsCamel)))
            #expect(camel["elementId"] as? String == "e")
            #expect((camel["params"] as? [String: Any])?["type"] as? String == docsType)
            let bridge = try object(EventLineWriter().line(event, style: .init(shape: .bridge)))
            #expect((bridge["action"] as? [String: Any])?["element_type"] as? String == wireType)
        }
        let number = Event(
            time: Timestamp(milliseconds: 5), meta: meta,
            payload: .stateUpdated(StateUpdate(elementID: "age", value: .input(.number(25)))))
        #expect(
            EventLineWriter().line(number, style: .init(shape: .wire)).contains(
                #""value":{"type":"number","value":25.0}"#))
        let year = Event(
            time: Timestamp(milliseconds: 5), meta: meta,
            payload: .stateUpdated(StateUpdate(elementID: "d", value: .datePicker(DateParts(year: 1995)))))
        #expect(EventLineWriter().line(year, style: .init(shape: .wire)).contains(#""value":{"year":1995}"#))
    }
}
