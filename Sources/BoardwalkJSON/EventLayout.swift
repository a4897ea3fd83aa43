import BoardwalkModel

/// Where each stored property of ``Event`` lies, so that the reader can initialize an event in place, one
/// property at a time, instead of through `Event.init`.
///
/// Why: with Swift 6.3.1, inlining `Event`'s `@inlinable` initializer into another module builds the value
/// in a temporary, copies it (a retain of every string) and destroys the temporary (a release of each), on
/// every line; the optimizer does not remove the pair. Storing each property straight into the destination
/// has no copy. Checked once per reader: when the properties are not exactly the eight listed here (the model
/// gained one, or one stopped being stored), ``init()`` fails and the reader uses the initializer.
struct EventLayout {
    let time: Int, session: Int, profile: Int, eventID: Int, placement: Int, variation: Int, meta: Int, payload: Int

    /// `nil` when ``Event`` does not have exactly these eight stored properties.
    init?() {
        guard let time = MemoryLayout<Event>.offset(of: \Event.time),
            let session = MemoryLayout<Event>.offset(of: \Event.session),
            let profile = MemoryLayout<Event>.offset(of: \Event.profile),
            let eventID = MemoryLayout<Event>.offset(of: \Event.eventID),
            let placement = MemoryLayout<Event>.offset(of: \Event.placement),
            let variation = MemoryLayout<Event>.offset(of: \Event.variation),
            let meta = MemoryLayout<Event>.offset(of: \Event.meta),
            let payload = MemoryLayout<Event>.offset(of: \Event.payload)
        else { return nil }
        // Every stored property must be covered, or part of the value would stay uninitialized.
        let sample = Event(time: Timestamp(microseconds: 0), meta: nil, payload: .onboardingLoaded)
        guard Mirror(reflecting: sample).children.count == 8 else { return nil }
        let ranges = [
            time..<time + MemoryLayout<Timestamp>.size,
            session..<session + MemoryLayout<String?>.size, profile..<profile + MemoryLayout<String?>.size,
            eventID..<eventID + MemoryLayout<String?>.size, placement..<placement + MemoryLayout<String?>.size,
            variation..<variation + MemoryLayout<String?>.size, meta..<meta + MemoryLayout<Meta?>.size,
            payload..<payload + MemoryLayout<Payload>.size,
        ].sorted { $0.lowerBound < $1.lowerBound }
        for (a, b) in zip(ranges, ranges.dropFirst()) where a.overlaps(b) { return nil }
        guard ranges.last!.upperBound <= MemoryLayout<Event>.size else { return nil }
        (self.time, self.session, self.profile, self.eventID) = (time, session, profile, eventID)
        (self.placement, self.variation, self.meta, self.payload) = (placement, variation, meta, payload)
    }

    /// Initializes the uninitialized `out` with an event made of these values, consuming them.
    @inline(__always)
    func initialize(
        _ out: UnsafeMutablePointer<Event>, time: Timestamp, session: consuming String?, profile: consuming String?,
        eventID: consuming String?, placement: consuming String?, variation: consuming String?,
        meta: consuming Meta?, payload: consuming Payload
    ) {
        let raw = UnsafeMutableRawPointer(out)
        (raw + self.time).initializeMemory(as: Timestamp.self, to: time)
        (raw + self.session).initializeMemory(as: String?.self, to: session)
        (raw + self.profile).initializeMemory(as: String?.self, to: profile)
        (raw + self.eventID).initializeMemory(as: String?.self, to: eventID)
        (raw + self.placement).initializeMemory(as: String?.self, to: placement)
        (raw + self.variation).initializeMemory(as: String?.self, to: variation)
        (raw + self.meta).initializeMemory(as: Meta?.self, to: meta)
        (raw + self.payload).initializeMemory(as: Payload.self, to: payload)
    }
}
