//! The matching machinery's prefilter: words every match of a pattern holds, so that a text
//! without them runs (and builds) no pattern at all.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, OnceLock};

use super::patterns::OWNERS;

/// For each pattern of [`PATTERN_SET`], in order, words every match of it holds: one word of
/// each list, ASCII case aside (a list marked `true` holds whole words: the pattern has `\b`
/// on both sides). A text without them cannot match the pattern, which then need not be
/// built. Derived from the patterns by the test `triggers_follow_the_patterns`, which prints
/// the table to paste after a pattern changes.
#[rustfmt::skip]
pub(super) const TRIGGER_WORDS: &[&[(bool, &[&str])]] = &[
    &[(false, &["bypass", "disregard", "forget", "ignore", "override"]), (false, &["constraints", "directives", "guardrails", "guidelines", "instruction", "prompt", "rules"]), (false, &["above", "all", "developer", "earlier", "original", "other", "preceding", "previous", "prior", "safety", "system", "your"])],
    &[(false, &["anything", "everything"]), (false, &["disregard", "forget", "ignore"]), (false, &["above", "before", "previously", "were"])],
    &[(false, &["abandon", "bypass", "discard", "disregard", "forget", "ignore", "override"]), (false, &["directions", "directives", "guardrails", "guidance", "instructions", "programming", "prompts", "system"])],
    &[(false, &["disregard", "forget", "ignore"]), (false, &["above", "foregoing", "preceding"])],
    &[(false, &["initial", "instructions", "system"]), (false, &["dump", "leak", "output", "print", "repeat", "reveal", "show"]), (false, &["the", "your"])],
    &[(false, &["instructions"]), (false, &["actual", "new", "real", "revised", "updated"])],
    &[(false, &["user"]), (false, &["don't", "never", "not"]), (false, &["inform", "let", "mention", "reveal", "tell"])],
    &[(false, &["without"]), (false, &["alerting", "asking", "informing", "notifying", "telling"]), (false, &["user"])],
    &[(false, &["you"]), (false, &["are"]), (false, &["dan", "developer", "jailbroken", "longer", "unrestricted"])],
    &[(false, &["activate", "enable", "enter", "switch"]), (false, &["mode"]), (false, &["dan", "god", "jailbreak"])],
    &[(false, &["不要理会", "不要理會", "忘掉", "忘記", "忘记", "忽略", "忽視", "忽视", "无视", "無視"]), (false, &["指令", "指示", "提示詞", "提示词", "約束", "约束", "規則", "规则", "設定", "设定"]), (false, &["一切", "上述", "上面", "之前", "以上", "以前", "先前", "全部", "前面", "原來", "原来", "所有", "系統", "系统"])],
    &[(false, &["使用者", "用戶", "用户"]), (false, &["不可", "不得", "不要", "切勿", "別", "别"]), (false, &["告訴", "告诉", "提醒", "讓", "让", "通知"])],
    &[(false, &["無視"]), (false, &["プロンプト", "ルール", "制約", "命令", "指示"]), (false, &["の"])],
    &[(false, &["ユーザーに"]), (false, &["てはいけ", "ないで", "るな"]), (false, &["伝え", "教え", "知らせ", "言わ"])],
    &[(false, &["무시"]), (false, &["기존", "모든", "위의", "이전"]), (false, &["규칙", "명령", "지시", "지침", "프롬프트"])],
    &[(false, &["indicaciones", "instru", "instrucciones", "reglas", "regras"]), (false, &["descarta", "ignora", "ignorar", "ignore", "olvida", "olvidar"]), (false, &["anteriores", "originais", "originales", "previas", "vias"])],
    &[(false, &["ignore", "oublie"]), (false, &["d'origine", "dentes", "initiales", "rieures"]), (false, &["consignes", "gles", "instructions"])],
    &[(false, &["ignoriere", "ignorieren", "ignoriert", "missachte", "vergessen", "vergiss"]), (false, &["anweisungen", "instruktionen", "regeln", "vorgaben"]), (false, &["bisherigen", "nglichen", "obigen", "vorherigen", "vorigen"])],
    &[(false, &["инструкции", "правила", "указания"]), (false, &["исходные", "предыдущие", "прежние", "прошлые"]), (false, &["абудь", "гнорируй"])],
    &[(false, &["aside"]), (false, &["constraints", "directions", "directives", "guidance", "guidelines", "instruction", "orders", "policies", "programming", "prompt", "rules"]), (false, &["cast", "leave", "push", "put", "set"])],
    &[(false, &["above", "developer", "earlier", "given", "initial", "original", "preceding", "previous", "prior", "safety", "system"]), (false, &["constraints", "directions", "directives", "guidance", "guidelines", "instruction", "orders", "policies", "prompt", "restrictions", "rules"]), (false, &["abandon", "adhere", "attention", "cancel", "comply", "discard", "ditch", "drop", "follow", "following", "heed", "lift", "longer", "nullify", "obey", "scrap", "suspend", "throw"])],
    &[(false, &["system"]), (false, &["directive", "instruction", "message", "order", "override", "policies", "policy", "prompt", "rules", "settings", "update"]), (false, &["actual", "emergency", "new", "official", "override", "overriding", "priority", "real", "revised", "updated"])],
    &[(false, &["system"]), (false, &["override", "policy"])],
    &[(false, &["directive", "instruction", "message", "notice", "override"]), (false, &["admin", "anthropic", "openai", "operator", "root"])],
    &[(false, &["from"]), (false, &["now", "point"]), (false, &["disregard", "forget", "ignore", "you"])],
    &[(false, &["your"]), (false, &["actual", "new", "only", "primary", "real", "true", "updated"]), (false, &["directive", "goal", "instruction", "job", "mission", "objective", "purpose", "role", "task"])],
    &[(false, &["directives", "guidance", "instruction", "prompt", "rules"]), (false, &["above", "earlier", "initial", "original", "previous", "prior", "system"]), (false, &["cance", "disabled", "fake", "invalid", "lifted", "longer", "null", "overridden", "revoked", "suspended", "test", "void"])],
    &[(false, &["disregard", "forget", "ignore", "override"]), (false, &["guidelines", "policies", "restrictions", "rules", "safety", "training", "what"])],
    &[(false, &["anterior", "arriba", "dadas", "inicial", "original", "precedente", "previa", "recibidas", "seguridad", "sistema"]), (false, &["anula", "anule", "deja", "desatiende", "descarta", "descarte", "ignora", "ignorad", "ignorar", "ignore", "ignoren", "obedezca", "obedezcas", "olvida", "olvidad", "olvidar", "olvide", "olviden", "omiso", "omita", "omite", "pasa", "siga", "sigas"])],
    &[(false, &["diretiva", "diretriz", "diretrizes", "instru", "norma", "ordens", "orienta", "regra", "regras"]), (false, &["abandone", "anule", "deixa", "deixe", "descarta", "descarte", "desconsidera", "desconsidere", "esque", "esquece", "esquecer", "ignora", "ignorar", "ignore", "ignorem", "obede", "siga", "sigas"])],
    &[(false, &["abandonne", "abstraction", "annule", "compte", "ignore", "laisse", "mets", "mettez", "oublie", "suis", "suivez"]), (false, &["consigne", "directive", "gle", "indication", "instruction", "ordres", "orientation"]), (false, &["ci-dessus", "curit", "d'origine", "dente", "donn", "initiale", "originale", "rieure", "syst", "ues"])],
    &[(false, &["befolge", "befolgen", "bergehe", "bergehen", "ignorier", "ignoriere", "ignorieren", "ignoriert", "missachte", "missachten", "missachtet", "vergessen", "vergesst", "vergiss", "verwerfen", "verwirf"]), (false, &["anweisung", "befehle", "hinweise", "instruktionen", "leitlinien", "regeln", "richtlinien", "vorgaben"]), (false, &["alten", "bisherige", "here", "ngliche", "obige", "sicherheits", "system", "vorangegangene", "vorherige", "vorige", "vorstehende"])],
    &[(false, &["anweisung", "befehle", "instruktionen", "regeln", "richtlinien", "vorgaben"]), (false, &["befolgen", "ignorieren", "lassen", "missachten", "sind", "vergessen"]), (false, &["bisherige", "here", "ngliche", "obige", "vorangegangene", "vorherige", "vorige"])],
    &[(false, &["директив", "инструкци", "ограничени", "правил", "распоряжени", "рекомендаци", "указани", "установк"]), (false, &["внимания", "выполняй", "забудь", "игнорируй", "отбрось", "отмени", "пренебреги", "проигнорируй", "следуй", "стороне", "сторону"]), (false, &["все", "всё", "вышеизложенн", "вышеуказанн", "исходн", "первоначальн", "предыдущ", "прежн", "прошл", "системн", "стар"])],
    &[(false, &["инструкци", "ограничени", "правил", "указани", "установк"]), (false, &["действуют", "забудь", "игнорируй", "недействительн", "отбрось", "отменен"]), (false, &["все", "исходн", "предыдущ", "прежн", "прошл", "системн"])],
    &[(false, &["准则", "命令", "指令", "指南", "指引", "指示", "提示詞", "提示词", "政策", "準則", "策略", "約束", "约束", "要求", "規則", "規定", "规则", "规定", "設定", "设定", "限制"]), (false, &["一切", "上述", "上面", "之前", "以上", "以前", "先前", "全部", "刚才", "初始", "前面", "剛才", "原來", "原先", "原有", "原来", "安全", "所有", "早先", "此前", "系統", "系统"]), (false, &["不再遵守", "不再遵循", "不必遵守", "不理会", "不用遵守", "不要理会", "不要理會", "不要遵守", "丟掉", "丢掉", "作废", "作廢", "停止遵守", "停止遵循", "忘掉", "忘記", "忘记", "忽略", "忽視", "忽视", "抛开", "抛弃", "拋棄", "拋開", "搁置", "撇开", "撇開", "擱置", "放下", "放弃", "放棄", "无视", "無視", "繞過", "绕过"])],
    &[(false, &["上述", "之前", "今天", "以上", "先前", "原來", "原来", "此刻", "现在", "現在", "系統", "系统"])],
    &[(false, &["取り消", "従わな", "忘れ", "無効", "無視", "破棄"]), (false, &["ガイドライン", "プロンプト", "ルール", "制約", "命令", "指令", "指示", "方針", "規則", "設定"]), (false, &["の"])],
    &[(false, &["これから", "これより", "今から", "今後", "新しい"])],
    &[(false, &["따르지", "무시", "버려", "잊고", "잊어", "취소"]), (false, &["기존", "모든", "시스템", "앞선", "앞의", "원래", "위의", "이전", "지금까지의"]), (false, &["가이드라인", "규칙", "명령", "설정", "정책", "제약", "지시", "지침", "프롬프트"])],
    &[(false, &["새로운", "앞으로", "이제부터", "지금부터"])],
    &[(false, &["partir"])],
    &[(false, &["bist", "ignorierst", "keine", "maintenant", "navant", "sormais", "wirst"])],
    &[(false, &["момента", "отныне", "теперь"]), (false, &["больше", "игнорировать", "обязан", "ограничений", "свободн", "являешься"]), (false, &["вы", "ты"])],
    &[(false, &["politique", "sistema", "system", "системн"])],
    &[(false, &["assistant", "end_header_id", "endoftext", "eot_id", "im_end", "im_start", "start_header_id", "system", "user"]), (false, &["<|"]), (false, &["|>"])],
    &[(false, &["<|"]), (false, &["|>"])],
    &[(false, &["<｜"]), (false, &["｜>"])],
    &[(false, &["developer", "end_of_turn", "function_results", "human", "im_end", "im_start", "model_response", "start_of_turn", "tool_result", "user"])],
    &[(false, &["inst]"])],
    &[(false, &["sys>>"]), (false, &["<<"])],
    &[(false, &["assistant", "function_calls", "reminder", "system", "tool_call"])],
    &[(false, &["assistant", "human", "system", "system prompt"])],
    &[(true, &["curl", "wget"]), (false, &["sh"])],
    &[(true, &["curl", "wget"]), (false, &["node", "perl", "python", "ruby"])],
    &[(false, &["sh"]), (false, &["-c"]), (false, &["$(", "curl", "wget"])],
    &[(false, &["rm"]), (false, &["-f", "-r", "fr", "rf"])],
    &[(false, &["/dev/tcp/"])],
    &[(false, &["nc"])],
    &[(false, &["base64"]), (false, &["sh"]), (false, &["--decode", "-d"])],
    &[(false, &["powershell"]), (false, &["enc", "encodedcommand"])],
    &[(false, &["iex"])],
    &[(true, &["execute", "run"]), (false, &["without"]), (false, &["approval", "asking", "confirmation", "confirming", "permission", "review"])],
    &[(true, &["curl", "invoke-webrequest", "iwr", "wget"]), (false, &[".sh", "/tmp/", "chmod"])],
    &[(false, &["curl", "eval", "wget"])],
    &[(false, &["curl", "wget"]), (false, &["node", "perl", "php", "python", "ruby"]), (false, &["$("])],
    &[(false, &["node", "perl", "python", "ruby"]), (false, &["eval", "exec", "popen", "system"]), (false, &["http", "lwp::", "net::http", "open-uri", "requests.get", "urllib", "urlopen"])],
    &[(false, &["iex", "invoke-expression"])],
    &[(false, &[".aws/credentials", ".config/gh/hosts", ".docker/config.json", ".git-credentials", ".gnupg/", ".kube/config", ".netrc", ".npmrc", ".pgpass", ".pypirc", ".ssh/", ".ssh/id_", ".vault-token", "/etc/shadow", "application_default", "credentials"]), (false, &["base64", "cat", "gc", "get-content", "head", "less", "more", "nl", "od", "strings", "tac", "tail", "type", "xxd"])],
    &[(false, &["http"]), (false, &["apply", "carry", "execute", "follow", "obey"]), (false, &["://"])],
    &[(false, &["commands", "directions", "instructions", "steps"]), (false, &["http"]), (false, &["apply", "execute", "follow", "obey"])],
    &[(true, &["copy", "e-mail", "email", "exfiltrate", "forward", "leak", "paste", "post", "send", "transmit", "upload"]), (false, &[".env", "api", "code", "codebase", "credential", "password", "private", "repo", "repository", "secret", "source", "ssh", "token", "variables"]), (false, &["at", "to"])],
    &[(true, &["curl"]), (false, &["--data", "--form", "--upload-file", "-d", "-f", "-t"])],
    &[(false, &["cat", "env", "printenv"]), (false, &["curl", "nc", "ncat", "wget"])],
    &[(true, &["dig", "drill", "host", "nslookup", "ping", "resolve-dnsname", "traceroute"]), (false, &["$(", "base64", "cat", "env", "git", "head", "hostname", "id", "printenv", "whoami"])],
    &[(false, &["http"]), (false, &["://"]), (false, &["$("])],
    &[(false, &["http"]), (false, &["://"]), (false, &["base64", "cat", "env", "git", "head", "hostname", "id", "printenv", "whoami"])],
    &[(false, &["http"]), (false, &["://"]), (false, &["auth", "cookie", "cred", "credentials", "key", "pass", "passwd", "password", "secret", "session", "token"])],
    &[(false, &["http"]), (false, &["://"]), (false, &["!["])],
    &[(true, &["add", "append", "attach", "embed", "encode", "include", "insert", "put"]), (false, &["image", "link", "query", "url"]), (false, &["api", "conversation", "credential", "history", "password", "previous", "private", "secret", "system", "token", "variable"])],
    &[(true, &["copy", "e-mail", "email", "exfiltrate", "forward", "leak", "paste", "post", "push", "send", "transmit", "upload"]), (true, &["at", "in", "into", "to"]), (false, &["aws/credentials", "docker/config", "env", "git-credentials", "kube/config", "netrc", "npmrc", "pypirc", "ssh/id_"])],
    &[(true, &["nc", "ncat", "netcat", "socat"])],
    &[(true, &["nc", "ncat", "netcat"])],
    &[(true, &["wget"]), (false, &["--post-"]), (false, &["data", "file"])],
    &[(true, &["base64", "cat", "gzip", "tar", "xxd", "zip"]), (false, &[".aws", ".docker", ".env", ".git-credentials", ".kube", ".netrc", ".ssh", "/etc/passwd", "/etc/shadow"]), (false, &["curl", "nc", "ncat", "netcat", "socat", "wget"])],
    &[(false, &["directive", "instruction", "orders", "prompt", "system", "update"]), (false, &["additional", "critical", "hidden", "important", "new", "priority", "real", "revised", "secret", "system", "updated", "urgent"])],
    &[(false, &["you"]), (false, &["'re", "are"]), (false, &["if"])],
    &[(false, &["mode"]), (false, &["censorship", "filters", "guardrails", "guidelines", "limits", "policies", "restrictions", "rules", "safety", "you"]), (false, &["admin", "administrator", "chaos", "dan", "debug", "debugging", "dev", "developer", "diagnostic", "evil", "god", "jailbreak", "jailbroken", "maintenance", "opposite", "root", "sudo", "test", "testing", "training", "uncensored", "unfiltered", "unlocked", "unrestricted"])],
    &[(false, &["mode"]), (false, &["you"]), (false, &["'re", "are"])],
    &[(false, &["mode"]), (false, &["activate", "boot", "enable", "engage", "enter", "initiate", "switch", "turn", "unlock"]), (false, &["chaos", "dan", "evil", "god", "jailbreak", "limit", "sudo", "uncensored", "unfiltered", "unrestricted"])],
    &[(false, &["content", "ethic", "ethical", "moderation", "safety"]), (false, &["check", "filter", "guardrails", "guidelines", "mode", "policy", "restrictions"])],
    &[(false, &["censorship", "guardrails", "restrictions"])],
    &[(false, &["access", "mode", "override", "privilege"]), (false, &["dan", "god", "jailbreak", "jailbroken", "uncensored", "unfiltered", "unrestricted"])],
    &[(false, &["failed", "forgot", "neglected", "omitted"]), (false, &["apologies", "bad", "oops", "pardon", "sorry"]), (false, &["add", "give", "include", "inform", "mention", "say", "specify", "tell"])],
    &[(false, &["forgot"]), (false, &["inform", "mention", "tell"]), (false, &["you"])],
    &[(false, &["final", "last", "more"]), (false, &["instruction", "rule", "thing"]), (false, &["disregard", "don't", "forget", "ignore", "instead", "never", "secretly", "tell"])],
    &[(false, &["special"]), (false, &["case", "exception", "handling", "instruction", "rule"]), (false, &["asked", "user", "you"])],
    &[(false, &["asked"]), (false, &["you", "you're"]), (false, &["don't", "instead", "not", "rather", "regardless"])],
    &[(false, &["you"]), (false, &["are", "have", "were"]), (false, &["act", "imagine", "pretend", "role-play", "roleplay", "suppose"])],
    &[(false, &["you"]), (false, &["are"]), (false, &["longer", "now"])],
    &[(false, &["act", "answer", "behave", "play", "reply", "respond", "role-play", "roleplay"]), (false, &["assistant", "character", "dan", "different", "evil", "jailbroken", "model", "rogue", "uncensored", "unfiltered", "unrestricted", "with", "without"]), (false, &["as", "like"])],
    &[(false, &["anything", "character", "freed", "granted", "jailbroken", "liberated", "released", "unlocked"])],
    &[(false, &["debug", "entwicklermodus", "jailbreak", "mode", "modo", "режим", "デバッグモード", "开发者模式", "脱獄モード", "調試模式", "调试模式", "越狱模式", "越獄模式", "開発者モード", "開發者模式", "개발자", "디버그", "탈옥"]), (false, &["activ", "activad", "aktiviert", "ativad", "eingeschaltet", "habilitad", "активир", "включ", "オン", "启用", "啟用", "已启用", "已啟用", "已激活", "开启", "有効", "激活", "開啟", "켜", "활성"])],
    &[(false, &["假装", "假裝", "充当", "充當", "想像", "想象", "扮演", "现在是"])],
    &[(false, &["eres", "finja", "imagine", "maintenant", "semblant", "stell", "вообрази", "представь", "притворись", "теперь", "になりきって", "のふりをして", "인", "행동해"])],
    &[(false, &["decirte", "desculp", "entschuldigung", "mencionar", "oubli", "сказать", "упомянуть", "ごめん", "すみません", "不好意思", "对不起", "對不起", "抱歉", "미안", "죄송"])],
    &[(false, &["atob", "b64decode", "base64", "decipher", "decode", "decrypt", "reverse", "rot", "rot13", "unhex", "unscramble"]), (false, &["act", "apply", "carry", "comply", "do", "execute", "follow", "obey", "perform", "run", "treat"]), (false, &["command", "commands", "content", "contents", "decoded", "instruction", "instructions", "it", "message", "output", "result", "steps", "text", "that", "them", "this", "those", "what"])],
    &[(false, &["block", "command", "instruction", "message", "payload", "steps", "string", "text"]), (false, &["act", "carry", "execute", "follow", "obey", "perform", "run"]), (false, &["b64", "base64", "ciphered", "encoded", "encrypted", "hex", "obfuscated", "rot"])],
    &[(false, &["command", "instruction", "message", "payload"]), (false, &["below", "following", "this"]), (false, &["b64", "base64", "hex", "rot"])],
    &[(false, &["chiffre", "code", "decodifica", "decodifique", "dekodiere", "dekodieren", "descifra", "entschl", "декодируй", "декодируйте", "расшифруй", "расшифруйте", "デコード", "復号", "解密", "解码", "解碼", "译码", "디코드", "디코딩", "복호화"]), (false, &["ausf", "befolge", "cumple", "cute", "ejecuta", "execute", "hre", "ob", "obede", "obedece", "siga", "sigue", "suis", "suivez", "выполни", "исполни", "следуй", "執行", "実行", "従え", "従って", "执行", "按照", "服从", "服從", "照做", "遵守", "遵循", "따르", "실행"])],
];

/// [`TRIGGER_WORDS`] by word: which patterns a text can match.
pub(super) struct Triggers {
    /// Every distinct word of the table, lowercase, and whether the table wants it whole.
    words: Vec<(&'static str, bool)>,
    /// Per pattern, its lists as indexes into `words`.
    needs: Vec<Vec<Vec<usize>>>,
    /// Texts looked at so far: the first few are searched word by word, the rest with
    /// `automaton`, which costs more to build than a few hundred searches take.
    texts: AtomicUsize,
    /// Every word in one automaton, for a process that gates many texts (`check --all`).
    automaton: OnceLock<Option<aho_corasick::AhoCorasick>>,
}

/// Texts searched word by word before the automaton is built.
const TEXTS_BEFORE_AUTOMATON: usize = 32;

pub(super) static TRIGGERS: LazyLock<Option<Triggers>> = LazyLock::new(|| {
    let mut words: Vec<(&'static str, bool)> = Vec::new();
    let mut needs = Vec::with_capacity(TRIGGER_WORDS.len());
    for lists in TRIGGER_WORDS {
        let mut pattern_needs = Vec::with_capacity(lists.len());
        for &(whole, list) in lists.iter() {
            let ids = list
                .iter()
                .map(
                    |&word| match words.iter().position(|&w| w == (word, whole)) {
                        Some(at) => at,
                        None => {
                            words.push((word, whole));
                            words.len() - 1
                        }
                    },
                )
                .collect();
            pattern_needs.push(ids);
        }
        needs.push(pattern_needs);
    }
    // The set of patterns is a bit mask.
    (needs.len() == OWNERS.len() && needs.len() <= 128).then(|| Triggers {
        words,
        needs,
        texts: AtomicUsize::new(0),
        automaton: OnceLock::new(),
    })
});

impl Triggers {
    /// The patterns `text` can match, as a bit mask over [`PATTERN_SET`]'s order.
    pub(super) fn candidates(&self, text: &[u8]) -> u128 {
        let seen = self.texts.fetch_add(1, Ordering::Relaxed);
        let automaton = match seen < TEXTS_BEFORE_AUTOMATON {
            true => None,
            false => self.automaton().as_ref(),
        };
        match automaton {
            Some(automaton) => {
                let present = self.present(automaton, text);
                self.mask(|id| present.get(id).copied().unwrap_or(true))
            }
            None => {
                // Each word searched for once, and only when a pattern still needs it.
                let lower = text.to_ascii_lowercase();
                let mut known: Vec<Option<bool>> = vec![None; self.words.len()];
                self.mask(|id| {
                    if let Some(Some(found)) = known.get(id) {
                        return *found;
                    }
                    let found = self.words.get(id).is_none_or(|&(word, whole)| {
                        memchr::memmem::find_iter(&lower, word.as_bytes())
                            .any(|at| !whole || whole_word(&lower, at, at + word.len()))
                    });
                    if let Some(slot) = known.get_mut(id) {
                        *slot = Some(found);
                    }
                    found
                })
            }
        }
    }

    /// The patterns all of whose lists hold a word for which `has` says yes.
    pub(super) fn mask(&self, mut has: impl FnMut(usize) -> bool) -> u128 {
        let mut mask = 0u128;
        for (at, lists) in self.needs.iter().enumerate() {
            if lists.iter().all(|ids| ids.iter().any(|&id| has(id))) {
                mask |= 1 << at;
            }
        }
        mask
    }

    pub(super) fn automaton(&self) -> &Option<aho_corasick::AhoCorasick> {
        self.automaton.get_or_init(|| {
            let words: Vec<&str> = self.words.iter().map(|(w, _)| *w).collect();
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(&words)
                .ok()
        })
    }

    /// For each word, whether `text` holds it (whole where the table wants it whole).
    pub(super) fn present(&self, automaton: &aho_corasick::AhoCorasick, text: &[u8]) -> Vec<bool> {
        let mut present = vec![false; self.words.len()];
        for m in automaton.find_overlapping_iter(text) {
            let id = m.pattern().as_usize();
            let whole = self.words.get(id).is_some_and(|&(_, whole)| whole);
            if !whole || whole_word(text, m.start(), m.end()) {
                if let Some(p) = present.get_mut(id) {
                    *p = true;
                }
            }
        }
        present
    }
}

/// Whether `text[start..end]` has an ASCII word boundary (`\b` without Unicode) at both ends.
fn whole_word(text: &[u8], start: usize, end: usize) -> bool {
    let word = |at: Option<usize>| {
        at.and_then(|i| text.get(i))
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
    };
    let boundary = |at: usize| word(at.checked_sub(1)) != word(Some(at));
    boundary(start) && boundary(end)
}
