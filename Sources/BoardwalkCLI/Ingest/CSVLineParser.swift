import Boardwalk

/// Reads what `boardwalk export --format csv` writes (``CSVExport``) back into events: `ingest --format csv`.
///
/// The first record of an input is its header, which says where each column is; columns it does not know (`seq`, a
/// query's `dwell`) are skipped, and a column that is missing reads as empty. A field is absent when it is empty,
/// except where the event always has it (an action id, a screen's ids, an answer's element, an error's text): there
/// it is the empty string. The answer comes from the `answer` column (JSON, read by the NDJSON reader), not from
/// `value` and `label`, which a query shows without what tells choices apart (their ids, their order).
struct CSVLineParser: LineParser {
    /// Reads the `answer` column's JSON.
    private let reader: EventReader
    /// Where each known column is in the current input's records (`nil` when the input has none).
    private var index: [Column: Int] = [:]
    private var headerRead = false

    /// The columns this reader takes, by their names in ``CSVExport/columns``.
    enum Column: String, CaseIterable {
        case time, kind, name, onboarding, screen
        case screenCID = "screen_cid"
        case totalScreens = "total_screens"
        case session, profile, action, element
        case elementType = "element_type"
        case reply, placement, variation
        case eventID = "event_id"
        case answer
        case errorDomain = "error_domain"
        case errorCode = "error_code"
        case errorMessage = "error_message"
    }

    /// - Parameter timeUnit: the unit of a time given as a number (`--time-unit`); an export writes ISO-8601.
    init(timeUnit: EpochUnit? = nil) throws {
        do {
            reader = try EventReader()
        } catch {
            throw RuntimeError("\(error)")
        }
        reader.timeUnit = timeUnit
    }

    var hasHeader: Bool { true }

    mutating func readHeader(_ line: UnsafeRawBufferPointer, input: String) throws {
        // A byte-order mark and spaces around a name are not part of it.
        let names = try CSVRecord.fields(of: line, lineNumber: 1).map { name in
            String(
                name.drop { $0 == "\u{FEFF}" || $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }
                    .reversed())
        }
        index = [:]
        for (i, name) in names.enumerated() {
            if let column = Column(rawValue: name), index[column] == nil { index[column] = i }
        }
        guard index[.kind] != nil else {
            throw RuntimeError(
                "\(input): its first line is not the header of an events CSV (no 'kind' column): "
                    + "ingest --format csv reads what 'boardwalk export --format csv' writes")
        }
        headerRead = true
    }

    mutating func parse(_ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp) throws
        -> Event
    {
        let fields = try CSVRecord.fields(of: line, lineNumber: lineNumber)
        func text(_ c: Column) -> String { index[c].flatMap { $0 < fields.count ? fields[$0] : nil } ?? "" }
        func optional(_ c: Column) -> String? {
            let t = text(c)
            return t.isEmpty ? nil : t
        }
        func failure(_ c: Column, _ reason: String) -> JSONReadError {
            JSONReadError(code: .type, line: lineNumber, path: c.rawValue, reason: reason)
        }
        func integer(_ c: Column) throws -> Int {
            guard let n = Int(text(c)) else { throw failure(c, "expected an integer, found \(quoted(text(c)))") }
            return n
        }
        guard let kind = EventKind(rawValue: text(.kind)) else {
            throw JSONReadError(
                code: .unknownValue, line: lineNumber, path: "kind",
                reason: "expected one of \(EventKind.allCases.map(\.name).joined(separator: ", ")), found "
                    + quoted(text(.kind)))
        }
        let time = try self.time(text(.time), lineNumber: lineNumber) ?? arrival
        var meta: Meta? = nil
        if !text(.screen).isEmpty {
            meta = Meta(
                onboardingID: text(.onboarding), screenClientID: text(.screenCID), screenIndex: try integer(.screen),
                totalScreens: try integer(.totalScreens))
        } else if kind != .error {
            throw JSONReadError(
                code: .missing, line: lineNumber, path: "screen", reason: "required for a \(kind.name) event, but empty"
            )
        }
        let payload: Payload
        switch kind {
        case .analytics:
            guard !text(.name).isEmpty else {
                throw JSONReadError(code: .missing, line: lineNumber, path: "name", reason: "required, but empty")
            }
            payload = .analytics(
                AnalyticsEvent(name: text(.name), elementID: optional(.element), reply: optional(.reply)))
        case .stateUpdated: payload = .stateUpdated(try answer(fields, lineNumber: lineNumber, text: text))
        case .openPaywall: payload = .openPaywall(actionID: text(.action))
        case .custom: payload = .custom(actionID: text(.action))
        case .close: payload = .close(actionID: text(.action))
        case .onboardingLoaded: payload = .onboardingLoaded
        case .error:
            payload = .error(
                OnboardingError(domain: text(.errorDomain), code: try integer(.errorCode), message: text(.errorMessage))
            )
        }
        return Event(
            time: time, session: optional(.session), profile: optional(.profile), eventID: optional(.eventID),
            placement: optional(.placement), variation: optional(.variation), meta: meta, payload: payload)
    }

    /// The `time` column: ISO-8601, or a number read by the NDJSON reader's rules (in ``timeUnit``, else told by its
    /// size); `nil` when empty.
    private func time(_ text: String, lineNumber: Int) throws -> Timestamp? {
        guard !text.isEmpty else { return nil }
        if let t = Timestamp(iso8601: text) { return t }
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39),
            Double(text) != nil
        else {
            throw JSONReadError(
                code: .range, line: lineNumber, path: "time",
                reason: "expected an ISO-8601 time in the years 1970 through 9999 or an epoch number, found "
                    + quoted(text))
        }
        let line =
            #"{"ts":\#(text),"type":"onboarding_loaded","#
            + #""meta":{"onboarding_id":"","screen_cid":"","screen_index":0,"total_screens":1}}"#
        do {
            return try reader.read(line, lineNumber: lineNumber, arrival: Timestamp(microseconds: 0)).time
        } catch {
            throw JSONReadError(code: error.code, line: lineNumber, path: "time", reason: error.reason)
        }
    }

    /// The answer of a `state_updated` row, from its `answer` JSON and `element_type`, read by the NDJSON reader.
    private func answer(_ fields: [String], lineNumber: Int, text: (Column) -> String) throws -> StateUpdate {
        guard !text(.answer).isEmpty else {
            throw JSONReadError(
                code: .missing, line: lineNumber, path: "answer",
                reason: "required for a state_updated event (the answer as JSON), but empty")
        }
        let line =
            #"{"type":"state_updated","element_id":\#(JSONString.quoted(text(.element))),"element_type":"#
            + JSONString.quoted(text(.elementType)) + #","value":\#(text(.answer)),"#
            + #""meta":{"onboarding_id":"","screen_cid":"","screen_index":0,"total_screens":1}}"#
        do {
            let event = try reader.read(line, lineNumber: lineNumber, arrival: Timestamp(microseconds: 0))
            guard case .stateUpdated(let update) = event.payload else {
                throw JSONReadError(code: .shape, line: lineNumber, path: "answer", reason: "not an answer")
            }
            return update
        } catch let error as JSONReadError {
            // The reader's path is in its synthetic line: name the column instead.
            let column = error.path?.hasPrefix("element_type") == true ? "element_type" : "answer"
            throw JSONReadError(code: error.code, line: lineNumber, path: column, reason: error.reason)
        }
    }

    private func quoted(_ s: String) -> String {
        JSONString.quoted(s.count > 40 ? String(s.prefix(40)) + "…" : s)
    }
}

/// RFC 4180 records: fields separated by commas, quoted when they hold a comma, a quote or a line break, with quotes
/// doubled inside.
enum CSVRecord {
    /// The fields of one record (without its line feed; a `\r` before it is dropped).
    /// - Throws: ``JSONReadError`` for a quote that is not closed, text after a closing quote, or bytes that are not
    ///   UTF-8.
    static func fields(of record: UnsafeRawBufferPointer, lineNumber: Int) throws -> [String] {
        var bytes = record
        if bytes.last == 0x0D { bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast()) }
        var fields: [String] = []
        var field: [UInt8] = []
        var i = 0
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
        func finish() throws {
            guard let s = String(validating: field, as: UTF8.self) else {
                throw JSONReadError(
                    code: .syntax, line: lineNumber, column: i + 1, reason: "field \(fields.count + 1) is not UTF-8")
            }
            fields.append(s)
            field.removeAll(keepingCapacity: true)
        }
        while true {
            if i < bytes.count, bytes[i] == quote {
                i += 1
                while true {
                    guard i < bytes.count else {
                        throw JSONReadError(
                            code: .syntax, line: lineNumber, column: i,
                            reason: "field \(fields.count + 1) opens a quote that is not closed")
                    }
                    if bytes[i] == quote {
                        if i + 1 < bytes.count, bytes[i + 1] == quote {
                            field.append(quote)
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    field.append(bytes[i])
                    i += 1
                }
                guard i == bytes.count || bytes[i] == comma else {
                    throw JSONReadError(
                        code: .syntax, line: lineNumber, column: i + 1,
                        reason: "field \(fields.count + 1) has text after its closing quote")
                }
            } else {
                while i < bytes.count, bytes[i] != comma {
                    field.append(bytes[i])
                    i += 1
                }
            }
            try finish()
            if i == bytes.count { return fields }
            i += 1  // the comma
        }
    }

    /// Where the record that starts at `start` ends: the first line feed outside quotes in `base[start..<end]`, or
    /// `nil` when there is none yet (a quoted field may hold line breaks).
    static func end(in base: UnsafeRawPointer, from start: Int, to end: Int) -> Int? {
        var quoted = false
        var i = start
        while i < end {
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            if b == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if b == 0x0A && !quoted {
                return i
            }
            i += 1
        }
        return nil
    }
}
