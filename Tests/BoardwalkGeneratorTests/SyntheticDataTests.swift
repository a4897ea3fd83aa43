import BoardwalkGenerator
import BoardwalkModel
import Testing

/// One corpus shared by the distribution tests (generated once; the tests only read it).
private let corpus = SyntheticData(sessions: 2_000, seed: 42)
private let corpusSessions = Array(corpus.sessions())

@Suite("Synthetic data")
struct SyntheticDataTests {
    @Test("The same seed gives the same events and lines; another seed does not")
    func determinism() {
        let a = SyntheticData(sessions: 200, seed: 7)
        let b = SyntheticData(sessions: 200, seed: 7)
        let c = SyntheticData(sessions: 200, seed: 8)
        #expect(Array(a.events()) == Array(b.events()))
        #expect(Array(a.lines()).map(\.line) == Array(b.lines()).map(\.line))
        #expect(Array(a.events()) != Array(c.events()))
        #expect(a.onboardings == b.onboardings)
        #expect(a.onboardings.map(\.id) != c.onboardings.map(\.id))
    }

    @Test("Session i does not depend on how many sessions are generated")
    func prefixStability() {
        let small = Array(SyntheticData(sessions: 50, seed: 3).sessions())
        let large = Array(SyntheticData(sessions: 500, seed: 3).sessions())
        #expect(small.count == 50)
        #expect(small == Array(large.prefix(50)), "session lists differ")
    }

    @Test("Counts add up: sessions, events, lines")
    func exactCounts() {
        let data = SyntheticData(sessions: 400, seed: 11)
        let sessions = Array(data.sessions())
        #expect(sessions.count == 400)
        #expect(sessions.map(\.index) == Array(0..<400))
        let events = Array(data.events())
        #expect(events.count == sessions.reduce(0) { $0 + $1.events.count })
        #expect(Array(data.lines()).count == events.count)
        // The interleaved stream is the multiset union of the sessions' events.
        var remaining: [Event: Int] = [:]
        for s in sessions { for e in s.events { remaining[e, default: 0] += 1 } }
        for e in events { remaining[e, default: 0] -= 1 }
        #expect(remaining.values.allSatisfy { $0 == 0 })
        #expect(SyntheticData(sessions: 0, seed: 1).events().map { $0 }.isEmpty)
    }

    @Test("Events are in time order, and each session's order is kept within a millisecond")
    func timeOrder() {
        let data = SyntheticData(sessions: 300, seed: 5)
        let events = Array(data.events())
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time })
        for session in data.sessions() {
            #expect(zip(session.events, session.events.dropFirst()).allSatisfy { $0.time <= $1.time })
            // The stream, filtered to this session's events, is the session's own order.
            if let id = session.sessionID {
                let filtered = events.filter { $0.session == id }
                #expect(filtered == session.events)
            }
        }
    }

    @Test("Catalog: UUID ids, 5 to 20 screens, final last, placements shared by variants")
    func catalog() {
        let data = SyntheticData(sessions: 1, seed: 9, onboardings: 12)
        for onboarding in data.onboardings {
            #expect(isUUID(onboarding.id))
            #expect(isUUID(onboarding.variation))
            #expect((5...20).contains(onboarding.screens.count))
            #expect(onboarding.screens.last?.clientID == "final")
            #expect(onboarding.screens.first?.clientID == "welcome")
        }
        #expect(Set(data.onboardings.map(\.id)).count == 12)
        #expect(Set(data.onboardings.map(\.placement)).count < 12)
    }

    @Test("Every kind, analytics name, element type and input type appears")
    func coverage() {
        let events = corpusSessions.flatMap(\.events)
        #expect(Set(events.map(\.kind)) == Set(EventKind.allCases))
        var names = Set<String>()
        var elementTypes = Set<ElementType>()
        var inputTypes = Set<InputType>()
        var emptyMultiSelect = false
        var partialDates = Set<[Bool]>()
        var emptyActionID = false
        for e in events {
            switch e.payload {
            case .analytics(let a): names.insert(a.name)
            case .stateUpdated(let u):
                elementTypes.insert(u.value.elementType)
                if case .input(let i) = u.value { inputTypes.insert(i.inputType) }
                if case .multiSelect(let c) = u.value, c.isEmpty { emptyMultiSelect = true }
                if case .datePicker(let d) = u.value {
                    partialDates.insert([d.year != nil, d.month != nil, d.day != nil])
                }
            case .openPaywall(let id), .close(let id): if id.isEmpty { emptyActionID = true }
            default: break
            }
        }
        #expect(names.isSuperset(of: AnalyticsName.allCases.map(\.rawValue)))
        #expect(names.contains("navigation_failed"))
        #expect(elementTypes == Set(ElementType.allCases))
        #expect(inputTypes == Set(InputType.allCases))
        #expect(emptyMultiSelect)
        #expect(partialDates.count >= 4)
        #expect(emptyActionID)
        #expect(events.contains { $0.kind == .error && $0.meta == nil })
        #expect(events.contains { $0.kind == .error && $0.meta != nil })
    }

    @Test("Every session ending occurs; completions are on the final screen")
    func outcomes() {
        var completed = 0, closed = 0, failed = 0, abandoned = 0
        for s in corpusSessions {
            let completions = s.events.filter { $0.payload == .analytics(.onboardingCompleted) }
            switch s.outcome {
            case .completed:
                completed += 1
                #expect(completions.count == 1)
            case .closed: closed += 1; #expect(completions.isEmpty)
            case .failed: failed += 1; #expect(completions.isEmpty)
            case .abandoned: abandoned += 1; #expect(completions.isEmpty)
            }
            for c in completions {
                #expect(c.meta?.screenClientID == "final")
                #expect(c.meta.map { $0.screenIndex == $0.totalScreens - 1 } == true)
            }
        }
        #expect(completed > 0 && closed > 0 && failed > 0 && abandoned > 0)
        #expect(completed + closed + failed + abandoned == corpusSessions.count)
    }

    @Test("Drop-off grows with the screen index")
    func dropOffGrows() {
        // For each relative position (first, middle, last third of the screens before `final`), the share of
        // sessions that reached a screen there and left on it.
        var reached = [0, 0, 0], left = [0, 0, 0]
        for s in corpusSessions {
            let total = corpus.onboardings[s.onboardingIndex].screens.count
            let leftAt: Int? =
                switch s.outcome {
                case .closed(let i), .abandoned(let i): i
                case .failed(let i): i
                case .completed: nil
                }
            for i in 0...min(s.furthestScreen, total - 2) {
                let third = min(2, 3 * i / (total - 1))
                reached[third] += 1
                if leftAt == i { left[third] += 1 }
            }
        }
        let rates = (0..<3).map { Double(left[$0]) / Double(max(1, reached[$0])) }
        #expect(rates[0] < rates[1])
        #expect(rates[1] < rates[2])
        #expect(
            SyntheticSession.dropProbability(screenIndex: 1, totalScreens: 10)
                < SyntheticSession.dropProbability(screenIndex: 8, totalScreens: 10))
    }

    @Test("Story details: email then user_email_collected, back-navigation, ties, ids")
    func storyDetails() {
        var emailFollowed = 0, emails = 0, backNavigations = 0, ties = 0
        var withSession = 0, withoutSession = 0, withEventID = 0, events = 0
        var eventIDs = Set<String>()
        for s in corpusSessions {
            if s.sessionID == nil { withoutSession += 1 } else { withSession += 1 }
            var lastPresented = -1
            for (i, e) in s.events.enumerated() {
                events += 1
                #expect(e.session == s.sessionID)
                #expect(e.profile == s.profile)
                if let id = e.eventID {
                    withEventID += 1
                    #expect(eventIDs.insert(id).inserted)
                }
                if i > 0, s.events[i - 1].time == e.time { ties += 1 }
                if case .stateUpdated(let u) = e.payload, case .input(.email) = u.value {
                    emails += 1
                    if i + 1 < s.events.count, s.events[i + 1].payload == .analytics(.userEmailCollected) {
                        emailFollowed += 1
                    }
                }
                if e.payload == .analytics(.screenPresented), let index = e.meta?.screenIndex {
                    if index < lastPresented { backNavigations += 1 }
                    lastPresented = index
                }
            }
        }
        #expect(emails > 0 && emailFollowed == emails)
        #expect(backNavigations > 0)
        #expect(ties > 0)
        #expect(withSession > withoutSession && withoutSession > 0)
        #expect(withEventID < events && Double(withEventID) > 0.9 * Double(events))
        #expect(Set(corpusSessions.map(\.profile)).count < corpusSessions.count)
    }

    @Test("Answers move conversion: completion differs by first answer")
    func conversionByAnswer() {
        var byValue: [String: (n: Int, completed: Int)] = [:]
        for s in corpusSessions {
            guard let v = s.firstSelectValue else { continue }
            byValue[v, default: (0, 0)].n += 1
            if s.outcome == .completed { byValue[v, default: (0, 0)].completed += 1 }
        }
        let rates = byValue.values.filter { $0.n >= 50 }.map { Double($0.completed) / Double($0.n) }
        #expect(rates.count >= 3)
        #expect((rates.max() ?? 0) - (rates.min() ?? 0) > 0.05)
    }
}

func isUUID(_ s: String) -> Bool {
    let parts = s.split(separator: "-", omittingEmptySubsequences: false)
    return parts.map(\.count) == [8, 4, 4, 4, 12] && s.allSatisfy { $0 == "-" || $0.isHexDigit && !$0.isUppercase }
}
