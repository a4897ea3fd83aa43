import BoardwalkModel

/// Realistic synthetic onboarding traffic, deterministic per seed.
///
/// A corpus is a catalog of onboardings (UUID ids, 5–20 screens, placements shared by A/B variants) and a
/// number of sessions, each one user's pass through one onboarding: loading, start, screens presented and
/// completed with answers of every element type, an email followed by `user_email_collected`, paywall taps,
/// permission requests, back-navigation, unknown analytics names, and an ending: completion on the `final`
/// screen, a close, an error, or silent abandonment. The chance of leaving grows with the screen index, so
/// funnels narrow towards the end. Some events share a millisecond; some sessions have no session id (the
/// store must infer them); most events carry an event id for de-duplication.
///
/// ```swift
/// let data = SyntheticData(sessions: 1_000, seed: 42)
/// for session in data.sessions() { … }            // one session at a time, in start order
/// let events = Array(data.events())                // every event, interleaved in time order
/// ```
///
/// Session `i` depends only on the seed and `i`: the first 100 sessions of a 1 000-session corpus are the
/// 100 sessions of a 100-session corpus.
package struct SyntheticData: Sendable {
    /// How many sessions the corpus has.
    package var sessionCount: Int
    /// The seed every choice derives from.
    package var seed: UInt64
    /// The onboardings sessions are drawn from.
    package var onboardings: [SyntheticOnboarding]
    /// When the first session starts.
    package var start: Timestamp
    /// Mean gap between session starts, in milliseconds.
    package var meanGapMilliseconds: Int64
    /// The share of sessions that carry a session id (the rest must be inferred).
    package var sessionIDRate: Double
    /// The share of events that carry an event id.
    package var eventIDRate: Double

    /// The default start: 2026-11-01T00:00:00Z.
    package static let defaultStart = Timestamp(microseconds: 1_793_491_200_000_000)

    /// A corpus of `sessions` sessions over `onboardings` onboardings.
    package init(
        sessions: Int, seed: UInt64 = 1, onboardings: Int = 6, start: Timestamp = SyntheticData.defaultStart,
        meanGapMilliseconds: Int64 = 3_000, sessionIDRate: Double = 0.85, eventIDRate: Double = 0.97
    ) {
        self.sessionCount = max(0, sessions)
        self.seed = seed
        self.onboardings = SyntheticOnboarding.catalog(count: max(1, onboardings), seed: seed)
        self.start = start
        self.meanGapMilliseconds = max(1, meanGapMilliseconds)
        self.sessionIDRate = sessionIDRate
        self.eventIDRate = eventIDRate
    }

    /// The sessions, in order of start time.
    package func sessions() -> Sessions { Sessions(data: self) }

    /// Every event of every session, interleaved in time order as an app's log would receive them; events of
    /// one millisecond keep the order their session produced them in.
    /// - Complexity: memory proportional to the sessions in flight at once, not to the corpus.
    package func events() -> Events { Events(sessions: sessions()) }

    /// The sessions of a corpus, one at a time.
    package struct Sessions: Sequence, IteratorProtocol, Sendable {
        let data: SyntheticData
        var index = 0
        var clock: Int64
        var gaps: SplitMix64

        init(data: SyntheticData) {
            self.data = data
            self.clock = data.start.microseconds / 1000
            self.gaps = SplitMix64(seed: data.seed, stream: 0x6A95)
        }

        package mutating func next() -> SyntheticSession? {
            guard index < data.sessionCount else { return nil }
            var rng = SplitMix64(seed: data.seed, stream: UInt64(index) &+ 1)
            var session = SyntheticSession.make(index: index, in: data, rng: &rng, startMilliseconds: clock)
            session.index = index
            index += 1
            // Gaps between 0 and 2x the mean; ties between sessions are possible and harmless.
            clock += Int64(gaps.unit() * Double(2 * data.meanGapMilliseconds))
            return session
        }
    }

    /// Every event of a corpus, in time order.
    package struct Events: Sequence, IteratorProtocol, Sendable {
        var sessions: Sessions
        var pending: MinHeap = MinHeap()
        var nextSession: SyntheticSession?
        var order: Int = 0

        init(sessions: Sessions) {
            self.sessions = sessions
            self.nextSession = self.sessions.next()
        }

        package mutating func next() -> Event? {
            // Admit every session that starts no later than the earliest pending event, then pop.
            while let session = nextSession,
                pending.isEmpty || session.startMilliseconds * 1000 <= pending.minTime!
            {
                for event in session.events {
                    pending.insert(Pending(event: event, order: order))
                    order += 1
                }
                nextSession = sessions.next()
            }
            return pending.popMin()?.event
        }
    }
}

extension SyntheticData {
    /// Every event of ``events()`` with an NDJSON line for it, in a shape, layout, time key and time format
    /// drawn per line from the seed (see ``EventLineWriter``): the corpus `boardwalk generate` prints.
    package func lines() -> Lines { Lines(events: events(), styles: SplitMix64(seed: seed, stream: 0x5_7E1E)) }

    /// Events with their NDJSON lines, in time order.
    package struct Lines: Sequence, IteratorProtocol, Sendable {
        var events: Events
        var styles: SplitMix64
        let writer = EventLineWriter()

        /// The event, the style it was written in, and the line (with its trailing newline).
        package mutating func next() -> (event: Event, style: EventLineWriter.Style, line: String)? {
            guard let event = events.next() else { return nil }
            let style = EventLineWriter.Style.random(using: &styles)
            return (event, style, writer.line(event, style: style))
        }
    }
}
