import BoardwalkModel

/// Encodes events into a reusable, growable byte buffer.
///
/// Records are appended one after another; ``removeAll()`` empties the buffer but keeps its memory, so a
/// warm encoder allocates nothing per event (only the interner might, for strings it has not seen).
///
/// ```swift
/// var encoder = RecordEncoder()
/// var strings = StringTable()
/// for event in events {
///     encoder.removeAll()
///     let record = try encoder.appendBody(event, strings: &strings)
///     try encoder.withUnsafeBytes { value in try put(key: record.header, value: value) }
/// }
/// ```
public struct RecordEncoder: Sendable {
    /// The bytes; `0..<used` hold records. Copy-on-write: copies of an encoder share storage until one writes.
    @usableFromInline var storage: EncoderStorage
    @usableFromInline var used: Int

    /// An empty encoder with room for `capacity` bytes before it grows.
    public init(capacity: Int = 4096) {
        storage = EncoderStorage(capacity: Swift.max(capacity, 256))
        used = 0
    }

    /// The number of bytes encoded so far.
    @inlinable
    public var count: Int { used }

    /// Whether nothing has been encoded since the last ``removeAll()``.
    @inlinable
    public var isEmpty: Bool { used == 0 }

    /// Forgets the encoded bytes, keeping the memory.
    @inlinable
    public mutating func removeAll() { used = 0 }

    /// Forgets the bytes from `count` on (the records appended after the buffer held `count` bytes), keeping the
    /// memory.
    @inlinable
    package mutating func removeLast(from count: Int) {
        precondition(count >= 0 && count <= used, "removeLast(from:) past the encoded bytes")
        used = count
    }

    /// A copy of the encoded bytes.
    public var bytes: [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: storage.pointer, count: used))
    }

    /// Calls `body` with the encoded bytes; the pointer is valid only inside `body`.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage) { try body(UnsafeRawBufferPointer(start: storage.pointer, count: used)) }
    }

    /// Makes the storage unique and at least `used + extra` bytes long; returns its base address.
    @inlinable @inline(__always)
    mutating func reserve(_ extra: Int) -> UnsafeMutableRawPointer {
        let needed = used + extra
        if _slowPath(!isKnownUniquelyReferenced(&storage) || needed > storage.capacity) { grow(needed) }
        return storage.pointer
    }

    @usableFromInline
    mutating func grow(_ needed: Int) {
        var size = storage.capacity
        while size < needed { size *= 2 }
        let copy = EncoderStorage(capacity: size)
        copy.pointer.copyMemory(from: storage.pointer, byteCount: used)
        storage = copy
    }

    /// Appends a full, self-contained record: length prefix, tag, flags, header (time, onboarding,
    /// screen index) and body fields. Batch files and arrival-ordered logs hold these.
    ///
    /// - Parameters:
    ///   - event: the event to encode.
    ///   - strings: interns every string field; called in field order.
    /// - Returns: the record's position and key fields.
    /// - Throws: ``EncodingError`` for a screen index outside `0...Meta.maxScreenIndex`, an interner that
    ///   returns `UInt32.max`, or a record longer than ``RecordFormat/maxRecordLength``; anything the
    ///   interner throws, unchanged. On a throw the buffer is left as it was.
    /// - Complexity: O(number of string fields) interner calls; no allocation once the buffer is warm.
    @inlinable @discardableResult
    public mutating func appendRecord<I: StringInterner>(_ event: borrowing Event, strings: inout I) throws
        -> EncodedRecord
    {
        try withUnsafePointer(to: event) {
            try append(at: $0, strings: &strings, full: true, eventID: nil, emptyIsAbsent: false)
        }
    }

    /// Appends a record body: the record without its length prefix and without the fields a store key
    /// carries (time, onboarding, screen index), which are returned in ``EncodedRecord/header`` instead.
    ///
    /// Decode it with ``RecordView/init(body:header:stringLimit:)`` and the same header.
    /// - Throws: as ``appendRecord(_:strings:)``.
    @inlinable @discardableResult
    public mutating func appendBody<I: StringInterner>(_ event: borrowing Event, strings: inout I) throws
        -> EncodedRecord
    {
        try withUnsafePointer(to: event) {
            try append(at: $0, strings: &strings, full: false, eventID: nil, emptyIsAbsent: false)
        }
    }

    /// ``appendRecord(_:strings:)`` for the event stored at `event`, read in place.
    ///
    /// The fastest entry point for events that sit in an array or buffer: the event is not copied, and
    /// its string fields are handed to the interner as pointers (``StringInterner/intern(at:)``), so a
    /// string the interner has seen recently costs no retain and release.
    /// - Parameter event: an initialized event, unchanged until the call returns (the interner must not
    ///   write to it).
    @inlinable @discardableResult
    package mutating func appendRecord<I: StringInterner>(at event: UnsafePointer<Event>, strings: inout I) throws
        -> EncodedRecord
    {
        try append(at: event, strings: &strings, full: true, eventID: nil, emptyIsAbsent: false)
    }

    /// ``appendBody(_:strings:)`` for the event stored at `event`, read in place (see
    /// ``appendRecord(at:strings:)``).
    ///
    /// - Parameter eventID: the event id's reference when the caller already made it with
    ///   ``EventIDRef/init(interning:strings:)`` through the same interner (a store does, to find
    ///   duplicates), so that the id is not parsed or interned twice; `nil` to let the encoder make it.
    ///   It must be the reference of `event`'s own id; it is ignored when the event has no id (or, with
    ///   `emptyIsAbsent`, an empty one).
    /// - Parameter emptyIsAbsent: encode an empty session, profile, event id, placement or variation, and an empty
    ///   element id or reply of `screen_completed`, as absent: the record of the event that
    ///   `Store.normalized(_:)` makes (semantics rule 11), without making it. A store that applies the rule to
    ///   every event saves a pass over the fields and a copy of each `screen_completed` payload. Other strings
    ///   are written as they are, empty or not.
    @inlinable @discardableResult
    package mutating func appendBody<I: StringInterner>(
        at event: UnsafePointer<Event>, strings: inout I, eventID: EventIDRef? = nil, emptyIsAbsent: Bool = false
    ) throws -> EncodedRecord {
        try append(at: event, strings: &strings, full: false, eventID: eventID, emptyIsAbsent: emptyIsAbsent)
    }

    @inlinable
    mutating func append<I: StringInterner>(
        at event: UnsafePointer<Event>, strings: inout I, full: Bool, eventID: EventIDRef?, emptyIsAbsent: Bool
    ) throws -> EncodedRecord {
        var bound = 160
        if event.pointee.payload.kind == .stateUpdated { bound += RecordEncoder.choiceBound(event.pointee.payload) }
        let base = reserve(bound)
        let start = used
        var header = RecordHeader(time: event.pointee.time, onboarding: nil, screenIndex: nil)
        var session: StringID? = nil
        var profile: StringID? = nil
        var w = ByteWriter(base: base, position: full ? start + 1 : start)
        try RecordEncoder.write(
            event, into: &w, strings: &strings, full: full, eventID: eventID, emptyIsAbsent: emptyIsAbsent,
            header: &header, session: &session, profile: &profile)
        let end = w.position
        if full {
            let length = end - start - 1
            if length > RecordFormat.maxRecordLength { throw EncodingError(.recordTooLong(length)) }
            let prefix = varintSize(UInt64(length))
            if prefix > 1 {
                // Rare (records of 128 bytes or more): shift the record to make room for a longer prefix.
                (base + start + prefix).copyMemory(from: base + start + 1, byteCount: length)
            }
            var p = ByteWriter(base: base, position: start)
            p.varint(UInt64(length))
            used = end + prefix - 1
        } else {
            if end - start > RecordFormat.maxRecordLength { throw EncodingError(.recordTooLong(end - start)) }
            used = end
        }
        return EncodedRecord(header: header, session: session, profile: profile, range: start..<used)
    }

    /// Bytes the choices of a multi-select may take (15 per choice: three references of up to 5 bytes).
    @inlinable
    static func choiceBound(_ payload: Payload) -> Int {
        if case .stateUpdated(let update) = payload, case .multiSelect(let choices) = update.value {
            return 15 * choices.count
        }
        return 0
    }

    @inlinable @inline(__always)
    static func intern<I: StringInterner>(_ s: String, _ strings: inout I) throws -> StringID {
        let id = try strings.intern(s)
        if id == RecordFormat.absent { throw EncodingError(.reservedStringID) }
        return id
    }

    /// Interns the string stored at `string` in place (see ``StringInterner/intern(at:)``).
    @inlinable @inline(__always)
    static func intern<I: StringInterner>(at string: UnsafePointer<String>, _ strings: inout I) throws -> StringID {
        let id = try strings.intern(at: string)
        if id == RecordFormat.absent { throw EncodingError(.reservedStringID) }
        return id
    }

    /// Interns the string of an optional stored at `string`, which the caller knows is not `nil`.
    ///
    /// `Optional<String>` keeps a present string's representation unchanged at offset 0 (`nil` is an
    /// extra inhabitant, a bit pattern no `String` has), so the memory is rebound to `String` only for the
    /// call, as layout-compatible types may be.
    @inlinable @inline(__always)
    static func intern<I: StringInterner>(present string: UnsafePointer<String?>, _ strings: inout I) throws -> StringID
    {
        try string.withMemoryRebound(to: String.self, capacity: 1) { try intern(at: $0, &strings) }
    }

    /// Writes the record of the event stored at `event`.
    ///
    /// Why a pointer: passed by value (even `borrowing`), the event was copied whole at the call (a retain
    /// and release of every string field), because the optimizer cannot prove that the interner's calls
    /// leave the event's memory alone. Here the trivial fields are read by ``EventShape/init(_:)`` (not
    /// inlined, so that no load of a whole `String?` or `Meta?` is merged across the interner's calls),
    /// and the top-level strings are handed to the interner by address.
    @inlinable
    static func write<I: StringInterner>(
        _ event: UnsafePointer<Event>, into w: inout ByteWriter, strings: inout I, full: Bool, eventID: EventIDRef?,
        emptyIsAbsent: Bool, header: inout RecordHeader, session: inout StringID?, profile: inout StringID?
    ) throws {
        let shape = EventShape(event, parseEventID: eventID == nil, emptyIsAbsent: emptyIsAbsent)
        w.byte(UInt8(RecordFormat.version) << RecordFormat.versionShift | shape.kind.code)

        var flags = shape.flags
        var idRef: EventIDRef? = nil
        if shape.hasEventID {
            idRef = eventID ?? shape.uuid
            switch idRef {
            case .uuid(_, _, let upper): flags |= (upper ? 3 : 2) << RecordFormat.eventIDShift
            default: flags |= 1 << RecordFormat.eventIDShift
            }
        }
        if flags & RecordFormat.flagMeta != 0 {
            guard shape.screenIndex >= 0 && shape.screenIndex <= Meta.maxScreenIndex else {
                throw EncodingError(.screenIndexOutOfRange(shape.screenIndex))
            }
        }
        w.varint(flags)

        if flags & RecordFormat.flagMeta != 0 {
            try event.pointer(to: \.meta)!.withMemoryRebound(to: Meta.self, capacity: 1) { meta in
                let onboarding = try intern(at: meta.pointer(to: \.onboardingID)!, &strings)
                header.onboarding = onboarding
                header.screenIndex = UInt16(shape.screenIndex)
                if full {
                    w.fixed64(UInt64(bitPattern: shape.time))
                    w.varint32(onboarding)
                    w.varint(UInt64(shape.screenIndex))
                }
                w.varint32(try intern(at: meta.pointer(to: \.screenClientID)!, &strings))
                w.signed(Int64(shape.totalScreens))
            }
        } else if full {
            w.fixed64(UInt64(bitPattern: shape.time))
        }
        if flags & RecordFormat.flagSession != 0 {
            let id = try intern(present: event.pointer(to: \.session)!, &strings)
            session = id
            w.varint32(id)
        }
        if flags & RecordFormat.flagProfile != 0 {
            let id = try intern(present: event.pointer(to: \.profile)!, &strings)
            profile = id
            w.varint32(id)
        }
        switch idRef {
        case .uuid(let hi, let lo, _):
            w.base.storeBytes(of: hi.bigEndian, toByteOffset: w.position, as: UInt64.self)
            w.base.storeBytes(of: lo.bigEndian, toByteOffset: w.position + 8, as: UInt64.self)
            w.position += 16
        case .string(let id):
            w.varint32(id)
        case nil:
            // Not a UUID: interned here, in field order, so that ids are assigned as always.
            if shape.hasEventID { w.varint32(try intern(present: event.pointer(to: \.eventID)!, &strings)) }
        }
        if flags & RecordFormat.flagPlacement != 0 {
            w.varint32(try intern(present: event.pointer(to: \.placement)!, &strings))
        }
        if flags & RecordFormat.flagVariation != 0 {
            w.varint32(try intern(present: event.pointer(to: \.variation)!, &strings))
        }

        if let byte = shape.payloadByte {
            // A payload without strings (most analytics events, `onboarding_loaded`): nothing to load.
            if shape.kind != .onboardingLoaded { w.byte(byte) }
            return
        }
        // Payload strings are loaded (retained) as before: the payload is a multi-payload enum, whose
        // cases' fields cannot be addressed in place; most events carry no payload string.
        let payload = event.pointee.payload
        switch payload {
        case .analytics(let analytics):
            switch analytics {
            case .screenCompleted(let element, let reply):
                // No rebinding and no closures here: either made the optimizer copy the whole payload once more.
                let hasElement = element != nil && !(emptyIsAbsent && element.unsafelyUnwrapped.utf8.isEmpty)
                let hasReply = reply != nil && !(emptyIsAbsent && reply.unsafelyUnwrapped.utf8.isEmpty)
                var b = AnalyticsName.screenCompleted.code
                if hasElement { b |= RecordFormat.analyticsHasElement }
                if hasReply { b |= RecordFormat.analyticsHasReply }
                w.byte(b)
                if hasElement { w.varint32(try intern(element.unsafelyUnwrapped, &strings)) }
                if hasReply { w.varint32(try intern(reply.unsafelyUnwrapped, &strings)) }
            case .unknown(let name):
                w.byte(RecordFormat.analyticsUnknown)
                w.varint32(try intern(name, &strings))
            default:
                w.byte(analytics.knownName!.code)
            }
        case .stateUpdated(let update):
            w.varint32(try intern(update.elementID, &strings))
            switch update.value {
            case .select(let c):
                w.byte(RecordFormat.valueSelect)
                w.varint32(try intern(c.id, &strings))
                w.varint32(try intern(c.value, &strings))
                w.varint32(try intern(c.label, &strings))
            case .multiSelect(let choices):
                w.byte(RecordFormat.valueMultiSelect)
                w.varint(UInt64(choices.count))
                for c in choices {
                    w.varint32(try intern(c.id, &strings))
                    w.varint32(try intern(c.value, &strings))
                    w.varint32(try intern(c.label, &strings))
                }
            case .input(.text(let s)):
                w.byte(RecordFormat.valueText)
                w.varint32(try intern(s, &strings))
            case .input(.email(let s)):
                w.byte(RecordFormat.valueEmail)
                w.varint32(try intern(s, &strings))
            case .input(.number(let d)):
                w.byte(RecordFormat.valueNumber)
                w.fixed64(d.bitPattern)
            case .datePicker(let date):
                var b = RecordFormat.valueDate
                if date.year != nil { b |= RecordFormat.dateHasYear }
                if date.month != nil { b |= RecordFormat.dateHasMonth }
                if date.day != nil { b |= RecordFormat.dateHasDay }
                w.byte(b)
                if let y = date.year { w.signed(Int64(y)) }
                if let m = date.month { w.signed(Int64(m)) }
                if let d = date.day { w.signed(Int64(d)) }
            }
        case .openPaywall(let id), .custom(let id), .close(let id):
            w.varint32(try intern(id, &strings))
        case .onboardingLoaded:
            break
        case .error(let e):
            w.varint32(try intern(e.domain, &strings))
            w.signed(Int64(e.code))
            w.varint32(try intern(e.message, &strings))
        }
    }
}

/// The trivial facts of an event the encoder needs, read in one call that is not inlined: inlined into the
/// encoder, the optimizer merged the loads of whole `String?` and `Meta?` fields and kept the copy alive
/// (retained) across the interner's calls. Read here, each check is a compare of a word in place.
@usableFromInline
struct EventShape {
    /// The record flags for session, profile, placement, variation and meta (the event id's bits are
    /// added by the encoder).
    @usableFromInline var flags: UInt64 = 0
    @usableFromInline var hasEventID = false
    /// The event id as a UUID, when it is one (`nil` for another id, or no id).
    @usableFromInline var uuid: EventIDRef? = nil
    @usableFromInline var time: Int64 = 0
    @usableFromInline var screenIndex = 0
    @usableFromInline var totalScreens = 0
    @usableFromInline var kind: EventKind = .onboardingLoaded
    /// The payload's whole encoding when it holds no string: the analytics byte of a known name other
    /// than `screen_completed`, or 0 for `onboarding_loaded` (which writes nothing); `nil` otherwise.
    @usableFromInline var payloadByte: UInt8? = nil

    /// Reads `event`'s trivial fields; parses its id as a UUID only when `parseEventID`. With `emptyIsAbsent`, an
    /// empty session, profile, event id, placement or variation counts as absent.
    @usableFromInline @inline(never)
    init(_ event: UnsafePointer<Event>, parseEventID: Bool, emptyIsAbsent: Bool) {
        time = event.pointee.time.microseconds
        kind = event.pointee.payload.kind
        if EventShape.isPresent(event.pointer(to: \.session)!, emptyIsAbsent) { flags |= RecordFormat.flagSession }
        if EventShape.isPresent(event.pointer(to: \.profile)!, emptyIsAbsent) { flags |= RecordFormat.flagProfile }
        if EventShape.isPresent(event.pointer(to: \.placement)!, emptyIsAbsent) { flags |= RecordFormat.flagPlacement }
        if EventShape.isPresent(event.pointer(to: \.variation)!, emptyIsAbsent) { flags |= RecordFormat.flagVariation }
        if let index = event.pointee.meta?.screenIndex {
            flags |= RecordFormat.flagMeta
            screenIndex = index
            totalScreens = event.pointee.meta.unsafelyUnwrapped.totalScreens
        }
        if EventShape.isPresent(event.pointer(to: \.eventID)!, emptyIsAbsent) {
            hasEventID = true
            // In place: loading the `String` would retain it, an atomic write to its storage that waits for the
            // cache line the digits are on anyway (the retain took 15 % of an encode, beside the load: `perf record`).
            if parseEventID,
                let (hi, lo, upper) = event.pointer(to: \.eventID)!.withMemoryRebound(
                    to: String.self, capacity: 1, parseUUID(at:))
            {
                uuid = .uuid(high: hi, low: lo, uppercase: upper)
            }
        }
        switch event.pointee.payload {
        case .onboardingLoaded: payloadByte = 0
        case .analytics(.screenCompleted), .analytics(.unknown): break
        case .analytics(let a): payloadByte = a.knownName.unsafelyUnwrapped.code
        default: break
        }
    }
}

extension EventShape {
    /// Whether the optional string at `string` is present (and, with `emptyIsAbsent`, not empty), read in place: a
    /// present value sits unchanged at offset 0 of the optional (`nil` is an extra inhabitant), so the memory is
    /// rebound to `String` to count its bytes without loading (retaining) it.
    @inlinable @inline(__always)
    static func isPresent(_ string: UnsafePointer<String?>, _ emptyIsAbsent: Bool) -> Bool {
        guard string.pointee != nil else { return false }
        return !emptyIsAbsent || string.withMemoryRebound(to: String.self, capacity: 1) { !$0.pointee.utf8.isEmpty }
    }
}

/// The encoder's heap buffer: raw bytes, freed with the object.
@usableFromInline
final class EncoderStorage: @unchecked Sendable {
    // Sendable because RecordEncoder only writes through it when it holds the only reference
    // (isKnownUniquelyReferenced), so shared instances are never mutated.
    @usableFromInline let pointer: UnsafeMutableRawPointer
    @usableFromInline let capacity: Int

    @usableFromInline
    init(capacity: Int) {
        pointer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: capacity)
        self.capacity = capacity
    }

    deinit { pointer.deallocate() }
}
