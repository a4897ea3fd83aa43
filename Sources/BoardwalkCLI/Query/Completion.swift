#if canImport(Glibc)
    import Glibc
#endif

/// Tab-completion state for libedit's C callbacks (which cannot capture context). Used only from the REPL's
/// thread, inside `readline`.
///
/// `"` does not break words, so a quoted onboarding id being typed (`"1b`) is one word, matched against the quoted
/// ids; typed without its quote (`1b`), it completes to the quoted id all the same.
enum Completion {
    nonisolated(unsafe) static var words: [String] = []
    /// The words that fit where the cursor is (``ContextCompletion``); ``words`` where it cannot tell.
    nonisolated(unsafe) static var context = ContextCompletion()
    /// The matches of the word being completed, handed out by ``next()``.
    nonisolated(unsafe) static var candidates: [String] = []
    nonisolated(unsafe) static var index = 0
    nonisolated(unsafe) static let breakCharacters = cString(" \t\n|,()=<>!")
    nonisolated(unsafe) static let readlineName = cString("boardwalk")
    /// ^], bound to `ed-redisplay` (see `installLineEditing`).
    static let redisplayKey: Int32 = 0x1D

    /// A C string that lives for the whole process (libedit keeps the pointer).
    private static func cString(_ s: String) -> UnsafePointer<CChar> {
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: s.utf8.count + 1)
        for (i, b) in s.utf8.enumerated() { p[i] = CChar(bitPattern: b) }
        p[s.utf8.count] = 0
        return UnsafePointer(p)
    }

    /// The next candidate, as a `malloc`ed C string (libedit frees it), or nil.
    static func next() -> UnsafeMutablePointer<CChar>? {
        guard index < candidates.count else { return nil }
        index += 1
        return strdup(candidates[index - 1])
    }

    /// What to type after `word` to complete it to `candidate`: the rest of it, then a space unless it ends in `(`
    /// (the argument comes next); `nil` when `candidate` does not start with `word` (an id typed without its
    /// quote, which libedit replaces whole).
    static func insertion(completing word: String, with candidate: String) -> String? {
        guard candidate.hasPrefix(word) else { return nil }
        return String(candidate.dropFirst(word.count)) + (candidate.hasSuffix("(") ? "" : " ")
    }

    /// The words that complete `prefix`.
    /// - Parameters:
    ///   - atLineStart: whether only spaces come before the word: dot-commands are offered there only.
    ///   - afterQuote: whether the word follows an opening quote that is not part of it: then only quoted words
    ///     match, and complete without their opening quote.
    static func matches(_ prefix: String, in words: [String], atLineStart: Bool = true, afterQuote: Bool = false)
        -> [String]
    {
        if afterQuote {
            return words.filter { $0.hasPrefix("\"" + prefix) }.map { String($0.dropFirst()) }
        }
        // An id typed without its opening quote (`1b`) still finds the quoted id.
        let quoted = prefix.isEmpty || prefix.hasPrefix("\"") ? nil : "\"" + prefix
        return words.filter { word in
            (word.hasPrefix(prefix) || quoted.map { word.hasPrefix($0) } == true)
                && (atLineStart || !word.hasPrefix("."))
        }
    }
}
