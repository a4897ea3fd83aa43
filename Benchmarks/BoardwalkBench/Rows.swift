// The rows the raw-LMDB and SQLite peers write: the store's keys, computed before timing so the peers
// measure only their database. Ids are interned in first-seen order, as the store interns them.
import BoardwalkCodec
import BoardwalkModel

/// One event as the peers store it, plus its two keys as bytes.
struct Rows {
    /// Interned onboarding number, screen index, time (µs), arrival sequence and interned session number.
    var onboarding: [UInt32] = []
    var screen: [UInt16] = []
    var time: [Int64] = []
    var seq: [UInt32] = []
    var session: [UInt32] = []
    /// 18-byte ordered keys, back to back: onboarding u32 ‖ screen u16 ‖ time i64 ‖ seq u32, big-endian,
    /// the time's sign bit flipped so signed order is byte order.
    var orderedKeys: [UInt8] = []
    /// 16-byte session-index keys: session u32 ‖ time i64 ‖ seq u32.
    var sessionKeys: [UInt8] = []
    /// Values back to back, and where each starts (count + 1 offsets).
    var values: [UInt8] = []
    var valueOffsets: [Int] = [0]

    static let orderedKeySize = 18
    static let sessionKeySize = 16
    /// The store has no screen for an event without meta (an error outside the page).
    static let noScreen = UInt16.max

    var count: Int { time.count }

    /// Builds the rows of `events`; `value` gives each event's stored bytes (the codec's record once it
    /// exists, a fixed-size stand-in before).
    init(_ events: [Event], value: (Event, inout [UInt8]) -> Void) {
        var onboardings: [String: UInt32] = [:]
        var sessions: [String: UInt32] = [:]
        var sessionOnboarding: [String: UInt32] = [:]
        orderedKeys.reserveCapacity(events.count * Rows.orderedKeySize)
        sessionKeys.reserveCapacity(events.count * Rows.sessionKeySize)
        for (i, e) in events.enumerated() {
            let sessionID = e.session ?? ""
            let o: UInt32
            if let m = e.meta {
                if let known = onboardings[m.onboardingID] {
                    o = known
                } else {
                    o = UInt32(onboardings.count)
                    onboardings[m.onboardingID] = o
                }
                sessionOnboarding[sessionID] = o
            } else {
                o = sessionOnboarding[sessionID] ?? UInt32.max
            }
            let s: UInt32
            if let known = sessions[sessionID] {
                s = known
            } else {
                s = UInt32(sessions.count)
                sessions[sessionID] = s
            }
            let sc = e.meta.map { UInt16($0.screenIndex) } ?? Rows.noScreen
            let t = e.time.microseconds
            let q = UInt32(i)
            onboarding.append(o); screen.append(sc); time.append(t); seq.append(q); session.append(s)
            appendBigEndian(&orderedKeys, o)
            appendBigEndian(&orderedKeys, sc)
            appendBigEndian(&orderedKeys, UInt64(bitPattern: t) ^ (1 << 63))
            appendBigEndian(&orderedKeys, q)
            appendBigEndian(&sessionKeys, s)
            appendBigEndian(&sessionKeys, UInt64(bitPattern: t) ^ (1 << 63))
            appendBigEndian(&sessionKeys, q)
            value(e, &values)
            valueOffsets.append(values.count)
        }
    }

    /// The rows as the store keeps them: the codec's record body as the value (time, onboarding and screen
    /// live in the key, so the body omits them), ids interned by the codec's string table.
    init(codec events: [Event]) throws {
        var strings = StringTable()
        var encoder = RecordEncoder()
        orderedKeys.reserveCapacity(events.count * Rows.orderedKeySize)
        sessionKeys.reserveCapacity(events.count * Rows.sessionKeySize)
        values.reserveCapacity(events.count * 32)
        for (i, e) in events.enumerated() {
            encoder.removeAll()
            let record = try encoder.appendBody(e, strings: &strings)
            let o = record.header.keyOnboarding
            let sc = record.header.keyScreenIndex
            let s = record.session ?? RecordFormat.absent
            let t = e.time.microseconds
            let q = UInt32(i)
            onboarding.append(o); screen.append(sc); time.append(t); seq.append(q); session.append(s)
            appendBigEndian(&orderedKeys, o)
            appendBigEndian(&orderedKeys, sc)
            appendBigEndian(&orderedKeys, UInt64(bitPattern: t) ^ (1 << 63))
            appendBigEndian(&orderedKeys, q)
            appendBigEndian(&sessionKeys, s)
            appendBigEndian(&sessionKeys, UInt64(bitPattern: t) ^ (1 << 63))
            appendBigEndian(&sessionKeys, q)
            values.append(contentsOf: encoder.bytes)
            valueOffsets.append(values.count)
        }
    }

    /// A 40-byte stand-in value (the anchors' value size) made from the event, for when no codec is there.
    static func standInValue(_ e: Event, _ out: inout [UInt8]) {
        var h: UInt64 = UInt64(bitPattern: e.time.microseconds)
        for i in 0..<5 {
            h = h &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(i)
            appendBigEndian(&out, h)
        }
    }
}

@inline(__always)
func appendBigEndian<T: FixedWidthInteger>(_ out: inout [UInt8], _ value: T) {
    var v = value.bigEndian
    withUnsafeBytes(of: &v) { out.append(contentsOf: $0) }
}
