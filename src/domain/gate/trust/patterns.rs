//! The rule table: each pattern rule with its regular expressions, compiled one by one on
//! first need or all together in one set when a text could match many.

use std::sync::{LazyLock, OnceLock};

use regex::bytes::{Regex, RegexBuilder};
use regex_automata::meta;

use super::{
    COMMAND, ENCODED_PAYLOAD, EXFILTRATION, INSTRUCTION_OVERRIDE, JAILBREAK, REMOTE_INSTRUCTIONS,
    ROLE_MARKER,
};

/// Compiles case-insensitive, multi-line patterns. They are byte patterns without Unicode
/// classes: those in bounded repeats (`[^\n]{0,60}`) cost tens of milliseconds each to compile.
/// Non-English words are literals (matched as their UTF-8 bytes, case-sensitively beyond ASCII). The patterns are constants checked by a unit test, so
/// one that failed to compile would be skipped rather than crash a check.
pub(super) fn patterns(sources: &[&str]) -> Vec<Regex> {
    sources
        .iter()
        .filter_map(|s| {
            RegexBuilder::new(s)
                .case_insensitive(true)
                .multi_line(true)
                .unicode(false)
                .build()
                .ok()
        })
        .collect()
}

pub(super) const OVERRIDE_PATTERNS: &[&str] = &[
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|each\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+)?(?:previous|prior|above|earlier|preceding|original|system|safety|developer|your|all|other)\s+(?:instructions?|prompts?|rules|directives|guidelines|guardrails|constraints)\b",
    r"\b(?:ignore|disregard|forget)\s+(?:everything|anything)\s+(?:you\s+were\s+told|above|before|previously)\b",
    r"\b(?:ignore|disregard|forget|override|bypass|discard|abandon)\s+(?:[a-z'-]+\s+){0,3}?(?:instructions|directives|guardrails|guidance|directions|system\s+prompts?|prompts|programming)\b",
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+)?(?:above|preceding|foregoing)\b",
    r"\b(?:reveal|print|show|output|repeat|leak|dump)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|entire\s+|hidden\s+)?(?:system\s+prompt|initial\s+prompt|instructions|hidden\s+instructions)\b",
    r"\b(?:new|updated|real|actual|revised)\s+(?:system\s+)?instructions\s*:",
    r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this|it)\s+to|reveal\s+(?:this|it)\s+to|let)\s+(?:the\s+)?user\b",
    r"\bwithout\s+(?:telling|asking|informing|notifying|alerting)\s+(?:the\s+)?user\b",
    r"\byou\s+are\s+(?:now\s+)?(?:no\s+longer\s+bound|DAN\b|jailbroken|unrestricted|in\s+developer\s+mode)",
    r"\b(?:enable|enter|activate|switch\s+to)\s+(?:god|jailbreak|DAN)\s+mode\b",
    // The same in the languages teams most often write memories in besides English. Literal
    // non-ASCII words match their UTF-8 bytes; `\b` is ASCII-only, so scripts without ASCII
    // letters do without it.
    "(?:忽略|无视|無視|忽视|忽視|不要理会|不要理會|忘记|忘記|忘掉)(?:掉)?(?:你)?(?:之前|以前|先前|上面|以上|前面|上述|所有|全部|一切|系统|系統|原来|原來)[^\n]{0,36}?(?:指令|指示|提示词|提示詞|规则|規則|设定|設定|约束|約束)",
    "(?:不要|别|別|切勿|不得|不可)(?:告诉|告訴|通知|让|讓|提醒)(?:用户|用戶|使用者)",
    "(?:以前|前|上記|これまで|すべて|全て)の(?:指示|命令|ルール|プロンプト|制約)を(?:すべて|全て)?無視",
    "ユーザーに(?:は)?(?:伝え|知らせ|言わ|教え)(?:ないで|てはいけ|るな)",
    "(?:이전|위의|모든|기존)\\s*(?:지시|지침|명령|규칙|프롬프트)\\S{0,6}\\s*(?:모두\\s*)?무시",
    r"\b(?:ignora|ignorar|ignore|olvida|olvidar|descarta)\s+(?:todas\s+|todos\s+)?(?:las\s+|los\s+|as\s+|os\s+|tus\s+)?(?:instrucciones|instru(?:ç|c)(?:õ|o)es|reglas|regras|indicaciones)\s+(?:anteriores|previas|pr(?:é|e)vias|originales|originais)",
    r"\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?(?:les\s+|vos\s+|tes\s+)?(?:instructions|consignes|r(?:è|e)gles)\s+(?:pr(?:é|e)c(?:é|e)dentes|ant(?:é|e)rieures|initiales|d'origine)",
    r"\b(?:ignoriere|ignorieren\s+sie|ignoriert|vergiss|vergessen\s+sie|missachte)\s+(?:alle\s+)?(?:vorherigen|bisherigen|obigen|vorigen|urspr(?:ü|ue)nglichen)\s+(?:anweisungen|instruktionen|regeln|vorgaben)",
    "(?:(?:и|И)гнорируй(?:те)?|(?:з|З)абудь(?:те)?)\\s+(?:все\\s+)?(?:предыдущие|прежние|прошлые|исходные)\\s+(?:инструкции|указания|правила)",
    // Paraphrases of the same intent: other verbs ("set aside", "stop following"), a new
    // policy or task announced to the model, the old rules declared void.
    r"\b(?:set|put|push|leave|cast)\s+aside\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+)?(?:\w+\s+){0,2}?(?:instructions?|guidance|guidelines|rules|directives|prompts?|directions|policies|constraints|orders|programming)\b",
    r"\b(?:pay\s+no\s+(?:attention|heed)\s+to|stop\s+following|no\s+longer\s+follow|(?:do\s+not|don't)\s+(?:follow|obey|adhere\s+to|comply\s+with)|drop|scrap|ditch|throw\s+out|discard|abandon|nullify|cancel|suspend|lift)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+)?(?:previous|prior|above|earlier|preceding|original|initial|system|given|safety|developer)\s+(?:instructions?|guidance|guidelines|rules|directives|prompts?|directions|policies|constraints|orders|restrictions)\b",
    r"\b(?:new|updated|revised|real|actual|official|emergency|override|overriding|priority)\s+system\s+(?:policy|policies|directives?|rules|message|prompt|instructions?|settings|update|override|orders?)\b",
    r"\bsystem\s+(?:override|prompt\s+override|policy\s+update)\b",
    r"\b(?:admin(?:istrator)?|operator|openai|anthropic|root)\s+(?:override|instructions?|message|notice|directive)\s*:",
    r"\bfrom\s+(?:now|this\s+point)\s+on(?:wards?)?\s*,?\s+(?:you\s+(?:are|will\s+be|act|have\s+no|can\s+ignore|must\s+ignore|may\s+ignore|no\s+longer|answer\s+as|respond\s+as|behave|shall\s+ignore|should\s+ignore|will\s+ignore|must\s+not\s+(?:follow|obey))|ignore|disregard|forget)\b",
    r"\byour\s+(?:new|real|actual|true|only|updated|primary)\s+(?:task|goal|instructions?|purpose|objective|mission|directive|job|role)\s+(?:is|are|will\s+be|now\s+is)\b",
    r"\b(?:previous|prior|above|earlier|original|system|initial)\s+(?:instructions?|prompts?|directives|guidance|rules)\s+(?:are|were|is|have\s+been|has\s+been)\s+(?:now\s+)?(?:void|null|cancel+ed|revoked|invalid|no\s+longer\s+(?:valid|apply|applicable|in\s+effect|in\s+force)|fake|a\s+test|lifted|suspended|overridden|disabled)\b",
    r"\b(?:ignore|disregard|forget|override)\s+(?:\w+\s+){0,3}?(?:what\s+you\s+(?:were|have\s+been)\s+told|your\s+(?:training|guidelines|rules|policies|restrictions|safety))\b",
    // Spanish, Portuguese, French, German, Russian: a verb of dropping, then the rules and a
    // word that makes them the earlier ones, in either order.
    r"\b(?:ignora|ignore|ignoren|ignorar|ignorad|olvida|olvide|olviden|olvidar|olvidad|descarta|descarte|omite|omita|desatiende|deja\s+(?:de\s+lado|a\s+un\s+lado)|haz\s+caso\s+omiso\s+(?:de|a)|no\s+(?:sigas|siga|obedezcas|obedezca)|pasa\s+por\s+alto|anula|anule)\s+(?:\S+\s+){0,4}?(?:(?:instrucci(?:ó|o)n(?:es)?|indicaci(?:ó|o)n(?:es)?|reglas?|directrices|directriz|normas?|pautas?|orientaci(?:ó|o)n(?:es)?|gu(?:í|i)as?|(?:ó|o)rdenes|consignas?)\s+(?:\S+\s+){0,2}?(?:anterior(?:es)?|previas?|original(?:es)?|inicial(?:es)?|del\s+sistema|de\s+arriba|recibidas|dadas|de\s+seguridad|precedentes?)|(?:anterior(?:es)?|previas?|original(?:es)?|inicial(?:es)?)\s+(?:\S+\s+)?(?:instrucci(?:ó|o)n(?:es)?|indicaci(?:ó|o)n(?:es)?|reglas?|directrices|normas?|pautas?|orientaci(?:ó|o)n(?:es)?|gu(?:í|i)as?))",
    r"\b(?:ignore|ignora|ignorar|ignorem|esque(?:ç|c)a|esque(?:ç|c)am|esquece|esquecer|desconsidere|desconsidera|descarte|descarta|deixe\s+de\s+lado|deixa\s+de\s+lado|n(?:ã|a)o\s+(?:siga|sigas|obede(?:ç|c)a)|abandone|anule)\s+(?:\S+\s+){0,4}?(?:(?:instru(?:ç|c)(?:õ|o)es|instru(?:ç|c)(?:ã|a)o|regras?|orienta(?:ç|c)(?:õ|o)es|orienta(?:ç|c)(?:ã|a)o|diretrizes|diretriz|diretivas?|normas?|ordens)\s+(?:\S+\s+){0,2}?(?:anterior(?:es)?|pr(?:é|e)vias?|originais|original|iniciais|inicial|do\s+sistema|acima|recebidas|dadas|de\s+seguran(?:ç|c)a)|(?:anterior(?:es)?|pr(?:é|e)vias?)\s+(?:\S+\s+)?(?:instru(?:ç|c)(?:õ|o)es|regras|orienta(?:ç|c)(?:õ|o)es|diretrizes))",
    r"\b(?:ignore[rz]?|oublie[rz]?|ne\s+tiens\s+pas\s+compte\s+(?:des|de)|ne\s+tenez\s+pas\s+compte\s+(?:des|de)|mets\s+de\s+c(?:ô|o)t(?:é|e)|mettez\s+de\s+c(?:ô|o)t(?:é|e)|fais\s+abstraction\s+(?:des|de)|faites\s+abstraction\s+(?:des|de)|laisse[rz]?\s+tomber|ne\s+suis\s+plus|ne\s+suivez\s+plus|abandonne[rz]?|annule[rz]?)\s+(?:\S+\s+){0,4}?(?:instructions?|consignes?|r(?:è|e)gles?|directives?|indications?|orientations?|ordres)\s+(?:\S+\s+){0,2}?(?:pr(?:é|e)c(?:é|e)dentes?|ant(?:é|e)rieures?|initiales?|d'origine|originales?|ci-dessus|du\s+syst(?:è|e)me|de\s+s(?:é|e)curit(?:é|e)|re(?:ç|c)ues|donn(?:é|e)es)",
    r"\b(?:ignoriere|ignorier|ignorieren|ignoriert|vergiss|vergesst|vergessen|missachte|missachten|missachtet|(?:ü|ue)bergehe|(?:ü|ue)bergehen|verwirf|verwerfen|befolge\s+nicht|befolgen\s+sie\s+nicht)\s+(?:\S+\s+){0,3}?(?:vorherigen?|bisherigen?|obigen?|vorigen?|urspr(?:ü|ue)nglichen?|vorangegangenen?|fr(?:ü|ue)heren?|vorstehenden?|alten|system\S*|sicherheits\S*)\s+(?:\S+\s+)?(?:anweisung(?:en)?|instruktionen|regeln|vorgaben|richtlinien|befehle|hinweise|leitlinien)",
    r"\b(?:vorherigen?|bisherigen?|obigen?|vorigen?|urspr(?:ü|ue)nglichen?|vorangegangenen?|fr(?:ü|ue)heren?)\s+(?:anweisung(?:en)?|instruktionen|regeln|vorgaben|richtlinien|befehle)\s+(?:\S+\s+){0,3}?(?:ignorieren|vergessen|missachten|au(?:ß|ss)er\s+acht\s+lassen|nicht\s+(?:mehr\s+)?befolgen|sind\s+(?:ab\s+sofort\s+)?(?:ung(?:ü|ue)ltig|aufgehoben|au(?:ß|ss)er\s+kraft))",
    "(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|отбрось(?:те)?|не\\s+обращай(?:те)?\\s+внимания\\s+на|пренебреги|не\\s+следуй(?:те)?|не\\s+выполняй(?:те)?|отмени(?:те)?|оставь(?:те)?\\s+в\\s+стороне|отложи(?:те)?\\s+в\\s+сторону)\\s+(?:\\S+\\s+){0,3}?(?:предыдущ\\S*|прежн\\S*|прошл\\S*|исходн\\S*|системн\\S*|вышеуказанн\\S*|вышеизложенн\\S*|первоначальн\\S*|стар\\S*|все|всё)\\s+(?:\\S+\\s+)?(?:инструкци\\S*|указани\\S*|правил\\S*|установк\\S*|директив\\S*|ограничени\\S*|рекомендаци\\S*|распоряжени\\S*)",
    "(?:предыдущ\\S*|прежн\\S*|прошл\\S*|исходн\\S*|системн\\S*|все)\\s+(?:инструкци\\S*|указани\\S*|правил\\S*|установк\\S*|ограничени\\S*)\\s+(?:\\S+\\s+){0,2}?(?:игнорируй\\S*|забудь\\S*|отбрось\\S*|отменен\\S*|больше\\s+не\\s+действуют|недействительн\\S*)",
    // Chinese, Japanese, Korean: verb, an earlier-rules word, the rules; or the rules voided.
    "(?:忽略|无视|無視|忽视|忽視|不要理会|不要理會|不理会|忘记|忘記|忘掉|抛开|拋開|抛弃|拋棄|撇开|撇開|搁置|擱置|放下|丢掉|丟掉|放弃|放棄|不再遵守|不要遵守|停止遵守|停止遵循|不再遵循|不用遵守|不必遵守|绕过|繞過|作废|作廢)[^\n]{0,12}?(?:之前|以前|先前|上面|以上|前面|上述|所有|全部|一切|系统|系統|原来|原來|原有|原先|此前|刚才|剛才|早先|初始|安全)[^\n]{0,24}?(?:指令|指示|提示词|提示詞|规则|規則|设定|設定|约束|約束|准则|準則|指引|指南|要求|规定|規定|限制|命令|政策|策略)",
    "(?:新的?|最新的?|更新的?|真正的)(?:系统|系統)(?:策略|政策|指令|规则|規則|设定|設定|提示)|(?:从|從)(?:现在|現在|此刻|今天)(?:开始|開始|起)(?:,|，)?\\s*(?:你|您)(?:是|将|將|必须|必須|不再|只|就是|应该|應該)|(?:以上|上述|之前|先前|原来|原來)的?(?:指令|指示|规则|規則|设定|設定)(?:已|已经|已經|全部|都)?(?:作废|作廢|失效|无效|無效|取消|不再适用|不再適用)",
    "(?:以前|前|上記|これまで|先ほど|最初|元|既存|システム|すべて|全て|今まで)の[^\n]{0,12}?(?:指示|命令|ルール|プロンプト|制約|指令|設定|ガイドライン|方針|規則)[^\n]{0,12}?(?:無視|忘れ|破棄|従わな|取り消|無効)",
    "(?:今から|これから|今後|これより)(?:は)?(?:,|、)?\\s*(?:あなた|君|きみ|お前)は|新しい(?:システム)?(?:ポリシー|方針|指示)\\s*(?::|：)",
    "(?:이전|위의|모든|기존|앞의|앞선|지금까지의|원래|시스템)\\s*[^\n]{0,12}?(?:지시|지침|명령|규칙|프롬프트|가이드라인|설정|정책|제약)[^\n]{0,12}?(?:무시|잊어|잊고|따르지|취소|버려)",
    "(?:지금부터|이제부터|앞으로)\\s*(?:너는|당신은|넌)|새로운\\s*시스템\\s*(?:정책|지침|규칙|명령)",
    r"\ba\s+partir\s+de\s+ahora(?:\s+mismo)?\s*,?\s*(?:t(?:ú|u)\s+)?(?:eres|ser(?:á|a)s|act(?:ú|u)as|actuar(?:á|a)s|ignorar(?:á|a)s|no\s+tienes\s+(?:restricciones|reglas|l(?:í|i)mites))|\ba\s+partir\s+de\s+agora\s*,?\s*(?:voc(?:ê|e)\s+)?(?:(?:é|e)\s|ser(?:á|a)\s|vai\s+ignorar|ignora|n(?:ã|a)o\s+tem\s+(?:restri|regras|limites))",
    r"\b(?:(?:à|a)\s+partir\s+de\s+maintenant|d(?:é|e)sormais|dor(?:é|e)navant)\s*,?\s*(?:tu\s+(?:es|seras|ignores|ignoreras|n'as\s+plus)|vous\s+(?:(?:ê|e)tes|serez|ignorez|ignorerez))\b|\b(?:ab\s+(?:jetzt|sofort)|von\s+nun\s+an|ab\s+heute)\s*,?\s*(?:bist\s+du|wirst\s+du|ignorierst\s+du|du\s+bist|hast\s+du\s+keine)\b",
    "(?:с\\s+этого\\s+момента|отныне|теперь)\\s*,?\\s*(?:ты|вы)\\s+(?:больше\\s+не|являешься|будешь\\s+игнорировать|не\\s+обязан|свободн|без\\s+ограничений)",
    r"\b(?:nueva\s+pol(?:í|i)tica\s+del\s+sistema|nova\s+pol(?:í|i)tica\s+do\s+sistema|nouvelle\s+politique\s+(?:du\s+)?syst(?:è|e)me|neue\s+system(?:richtlinie|anweisung|regel)\S*)|нов(?:ая|ые|ое)\s+системн\S*\s+(?:политика|инструкци\S*|правил\S*)",
];

pub(super) const ROLE_PATTERNS: &[&str] = &[
    r"<\|\s*(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|end_header_id)\s*\|>",
    r"<\|[a-z_]{2,30}\|>",
    "<｜[^\n]{1,60}?｜>",
    r"</?\s*(?:start_of_turn|end_of_turn|human|user|developer|tool_result|function_results|model_response|im_start|im_end)\s*>",
    r"\[/?INST\]",
    r"<</?SYS>>",
    r"</?\s*(?:system|assistant|system[-_]reminder|system[-_]prompt|tool_call|function_calls)\s*>",
    r"(?-i:^[ \t>]*(?:#{1,6}[ \t]*)?(?:SYSTEM|ASSISTANT|Assistant|HUMAN|Human|System prompt|SYSTEM PROMPT)[ \t]*:)",
];

pub(super) const COMMAND_PATTERNS: &[&str] = &[
    r"\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|k|da|fi)?sh\b",
    r"\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node)\b",
    r"\b(?:ba|z)?sh\s+-c\s+.{0,20}(?:curl|wget|\$\()",
    r"\brm\s+-(?:rf|fr|r\s+-f|f\s+-r)\s+(?:/|~|\$HOME|\*)",
    r"/dev/tcp/",
    r"\bnc\s+(?:-[a-z]*e\b|-c\b)",
    r"\bbase64\s+(?:-d|--decode)\b[^\n]*\|\s*(?:ba)?sh\b",
    r"\bpowershell(?:\.exe)?\s+(?:-\w+\s+)*-(?:enc|encodedcommand)\b",
    r"\biex\s*\(",
    r"\b(?:run|execute)\b[^.\n]{0,80}\bwithout\s+(?:asking|confirmation|confirming|approval|permission|review)\b",
    // Fetch, then run what was fetched: to a file, through process substitution or eval.
    r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n]*?\s(?:-[a-zA-Z]*[oO]|--output|--output-document|-outfile)\s*=?\s*\S+[^\n]*?(?:&&|;|\|\||\n)\s*(?:sudo\s+)?(?:(?:(?:ba|z|k|da)?sh|source|\.)\s+\S*(?:/tmp/|\.sh\b)|chmod\s+\+?[0-7]*x\s|(?:python3?|perl|ruby|node)\s+\S*/tmp/)",
    r"\b(?:(?:ba|z|k)?sh|source|\.)\s+<\(\s*(?:curl|wget)\b|\beval\s+[\x22']?\$\(\s*(?:curl|wget)\b",
    r"\b(?:python3?|perl|ruby|node|php)\s+-[a-z]*[ce]\s+[\x22']?\$\(\s*(?:curl|wget)\b",
    r"\b(?:python3?|perl|ruby|node)\s+-[a-z]*[ce]\s+[^\n]{0,80}?(?:urlopen|urllib|requests\.get|https?\.get|LWP::|open-uri|Net::HTTP)[^\n]{0,80}?(?:exec|eval|system|popen)",
    r"\|\s*(?:iex|invoke-expression)\b|\binvoke-expression\s*\(",
    // Reading a credential file.
    r"\b(?:cat|less|more|head|tail|type|get-content|gc|base64|xxd|od|strings|tac|nl)\s+(?:-\S+\s+)*[^\n|;&<>]{0,30}?(?:\.aws/credentials|\.ssh/id_[a-z0-9_]+|\.ssh/[a-z0-9_-]*(?:key|rsa|ed25519)|\.netrc|\.git-credentials|\.docker/config\.json|\.kube/config|\.npmrc|\.pypirc|/etc/shadow|\.gnupg/|gcloud/(?:credentials|application_default)|\.pgpass|\.vault-token|\.config/gh/hosts)",
];

pub(super) const REMOTE_PATTERNS: &[&str] = &[
    r"\b(?:fetch|download|visit|open|read|load|retrieve|curl|wget|go\s+to)\b[^.\n]{0,40}https?://\S+[^\n]{0,60}?\b(?:follow|obey|execute|apply|carry\s+out)\b",
    r"\b(?:follow|obey|execute|apply)\s+(?:the\s+)?(?:instructions|commands|steps|directions)\s+(?:at|from|in|on|found\s+at)\s+<?https?://",
];

pub(super) const EXFILTRATION_PATTERNS: &[&str] = &[
    r"\b(?:send|post|upload|email|e-mail|forward|exfiltrate|transmit|leak|paste|copy)\b[^.\n]{0,60}(?:\b(?:secrets?|credentials?|tokens?|api[\s_-]*keys?|passwords?|private\s+keys?|ssh\s+keys?|env(?:ironment)?\s+variables|source\s+code|the\s+(?:code|repo|repository|codebase))\b|\.env\b)[^\n]{0,60}?\b(?:to|at)\s+<?(?:https?://|[\w.+-]+@[\w-]+\.[\w.]+|[\w-]+\.[\w.-]*[a-z]{2,}/)",
    r"\bcurl\b[^\n]*\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file)\s+[^\n]*(?:\$\(|\$\{?[A-Z_]{3,}|@~|@/|@\.env|\bprintenv\b)",
    r"\b(?:printenv|env|cat\s+~?/?\.(?:ssh|aws|env)\S*)\s*\|\s*(?:curl|nc|ncat|wget)\b",
    // Through DNS: a lookup of a name built from a command's output.
    r"\b(?:nslookup|dig|host|drill|ping|resolve-dnsname|traceroute)\b[^\n]{0,80}?(?:\$\(|`(?:whoami|hostname|id|cat|env|printenv|base64|head|git)\b)",
    // Through a URL: a command's output or a secret's variable in it.
    // (Split so that each needs a word a plain link lacks: `$(`, a backquoted command, or a
    // secret's name; every memory holds a plain link.)
    r"\bhttps?://[^\s\x22'<>]*\$\(",
    r"\bhttps?://[^\s\x22'<>]*`(?:whoami|hostname|id|cat|env|printenv|base64|head|git)\b",
    r"\bhttps?://[^\s\x22'<>]*\?[^\s\x22'<>]*\$\{?[a-z0-9_]*(?:key|token|secret|pass|password|passwd|cred|credentials|auth|session|cookie)[a-z0-9_]*\b",
    r"!\[[^\]\n]*\]\(\s*<?https?://[^)\s]*[?&#][^)\s]*(?:\$\(|\$\{|\{\{|%7b%7b|\{[a-z_]+\}|<[a-z_]+>|\[[a-z_]+\])",
    r"\b(?:append|add|include|put|insert|embed|encode|attach)\b[^\n.]{0,60}?\b(?:secrets?|tokens?|api\s*keys?|passwords?|credentials?|conversation|chat\s+history|system\s+prompt|env(?:ironment)?\s+variables?|private\s+keys?|previous\s+messages)\b[^\n.]{0,60}?\b(?:urls?|links?|image|query\s+(?:string|param(?:eter)?s?))\b",
    r"\b(?:send|post|upload|email|e-mail|forward|exfiltrate|transmit|leak|paste|copy|push)\b[^\n]{0,40}?(?:~|\$HOME)?/?\.(?:aws/credentials|ssh/id_\S+|netrc|git-credentials|env\b|npmrc|pypirc|kube/config|docker/config)[^\n]{0,60}?\b(?:to|at|into|in)\b",
    // Through a socket or an upload of a credential file.
    r"\|\s*\b(?:nc|ncat|netcat|socat)\b\s+(?:-\S+\s+)*[a-z0-9.-]+\s+\d{2,5}\b",
    r"\b(?:nc|ncat|netcat)\b\s+(?:-\S+\s+)*[a-z0-9.-]+\s+\d{2,5}\s*<\s*\S",
    r"\bwget\b[^\n]*--post-(?:file|data)\b",
    r"\b(?:cat|base64|tar|zip|gzip|xxd)\b[^\n]*(?:\.aws|\.ssh|\.netrc|\.env\b|\.git-credentials|/etc/shadow|/etc/passwd|\.kube|\.docker)[^\n]*\|\s*(?:[^\n|]*\|\s*)*(?:curl|nc|ncat|netcat|wget|socat)\b",
];

pub(super) const JAILBREAK_PATTERNS: &[&str] = &[
    // A banner announcing new instructions: `*** NEW IMPORTANT INSTRUCTIONS ***`.
    r"(?:\*{2,}|={2,}|!{2,}|-{3,}|>{2,}|\[\[|#{3,}|【)\s*(?:(?:new|important|urgent|updated|critical|revised|priority|additional|secret|hidden|real|system)\s+){1,3}(?:instructions?|directives?|orders|system\s+(?:message|prompt|update)|prompt|task\s+update)\s*(?:\*{2,}|={2,}|!{2,}|-{3,}|<{2,}|\]\]|#{3,}|】|:)",
    r"\bif\s+you(?:\s+are|'re)\s+(?:an?\s+)?(?:ai|llm|large\s+language\s+model|language\s+model|chatbot|ai\s+assistant|gpt|claude|copilot|automated\s+(?:agent|assistant|system))\b",
    // A mode that lifts the model's rules, switched on.
    r"\b(?:developer|debug|debugging|dev|god|jailbreak|jailbroken|dan|training|test|testing|maintenance|admin|administrator|root|sudo|unrestricted|unfiltered|uncensored|unlocked|diagnostic|evil|chaos|opposite)\s+mode\s*(?:has\s+been\s+|is\s+(?:now\s+)?|:\s*)?(?:enabled|activated|engaged|unlocked|turned\s+on|on\b|active)[^\n]{0,120}?(?:\byou\s+(?:can|may|must|will|are|have|should)\s+(?:now\s+)?(?:ignore|bypass|answer|respond|say|do\s+anything|output|reveal)|\bno\s+(?:restrictions|filters|limits|rules)|\b(?:restrictions|filters|guidelines|policies|safety|limits|censorship|rules|guardrails)\s+(?:are\s+)?(?:disabled|off|lifted|removed|suspended|do\s+not\s+apply|no\s+longer\s+apply))",
    r"\byou(?:\s+are|'re)\s+(?:now\s+)?(?:running\s+|operating\s+)?in\s+(?:a\s+|the\s+)?(?:developer|debug|dev|god|jailbreak|dan|training|test|maintenance|admin|root|sudo|unrestricted|unfiltered|uncensored|unlocked|diagnostic|evaluation|evil)\s+mode\b",
    r"\b(?:enable|enter|activate|switch\s+(?:in)?to|turn\s+on|engage|unlock|initiate|boot\s+into)\s+(?:the\s+)?(?:god|jailbreak|dan|unrestricted|unfiltered|uncensored|evil|chaos|no-?limits?|sudo)\s+mode\b",
    // A fake configuration block that switches the model's safety off or grants a mode.
    r"\b(?:safety|content|moderation|ethics?|ethical)[_ -]?(?:filters?|checks?|guidelines|guardrails|mode|restrictions|policy)\s*[:=]\s*[\x22']?(?:off|false|disabled|none|0|no|bypass(?:ed)?)\b",
    r"\b(?:restrictions|guardrails|censorship)\s*[:=]\s*[\x22']?(?:none|off|false|disabled|0|removed|lifted)\b",
    r"\b(?:jailbreak|jailbroken|dan|god|unrestricted|unfiltered|uncensored)[_ -]?(?:mode|access|override|privileges?)\s*[\x22']?\s*[:=]\s*[\x22']?(?:true|on|enabled|1|yes|granted|active)\b",
    // "Sorry, I forgot to tell you…": a correction that smuggles a new instruction.
    r"\b(?:sorry|oops|apologies|my\s+(?:bad|apologies)|pardon)\b[^\n]{0,40}?\b(?:forgot|neglected|failed|omitted)\s+to\s+(?:tell|mention|say|inform|give|add|include|specify)\b",
    r"\bi\s+forgot\s+to\s+(?:tell|mention\s+to|inform)\s+you\b",
    r"\bone\s+(?:more|last|final)\s+(?:thing|instruction|rule)\s*(?:,|:|-)\s*(?:\S+\s+){0,6}?(?:ignore|disregard|forget|never\s+tell|don't\s+tell|do\s+not\s+tell|secretly|instead)\b",
    // "Special case: if you are asked to summarise…, instead…".
    r"\bspecial\s+(?:case|instruction|rule|exception|handling)\s*(?::|-|,)?\s*(?:\S+\s+){0,3}?(?:if|when|whenever)\s+(?:you\s+(?:are|'re|get)|asked|the\s+user\s+asks)\b",
    r"\b(?:if|when|whenever)\s+(?:you\s+are|you're|you\s+get)\s+(?:ever\s+)?asked\s+(?:to|about|for)\s+[^\n]{0,80}?\b(?:instead|rather\s+than|regardless|do\s+not\s+(?:mention|say|reveal|summari[sz]e)|don't\s+(?:mention|say|reveal))\b",
    // Role-play wrappers that hand the model another identity.
    r"\b(?:pretend|imagine|act\s+as\s+(?:if|though)|suppose|roleplay\s+that|role-play\s+that)\s+(?:that\s+)?you\s+(?:are|were|have\s+(?:no|been))\b",
    r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:a|an|the|my|called|named|dan|free|freed|unbound|liberated|not\s+bound|acting|playing)\b",
    r"\b(?:act|behave|respond|answer|reply|roleplay|role-play|play)\s+(?:as|like)\s+(?:an?\s+|the\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|dan|different|ai\s+(?:without|with\s+no)|assistant\s+(?:without|with\s+no)|model\s+(?:without|with\s+no)|character\s+(?:without|with\s+no|who\s+(?:ignores|has\s+no)))\b",
    r"\b(?:stay|remain)\s+in\s+character\b|\byou\s+have\s+been\s+(?:freed|liberated|jailbroken|unlocked|released|granted\s+(?:full|unrestricted|admin|root))\b|\bdo\s+anything\s+now\b",
    // The same framings in the other languages teams write in.
    "(?:modo\\s+(?:desarrollador|desenvolvedor|depuraci(?:ó|o)n|depura(?:ç|c)(?:ã|a)o|dan|dios|deus|sin\\s+restricciones|sem\\s+restri(?:ç|c)(?:õ|o)es)|mode\\s+(?:d(?:é|e)veloppeur|d(?:é|e)bogage|dan|sans\\s+restriction)|entwicklermodus|debug-?modus|jailbreak-?modus|режим\\S*\\s+(?:разработчика|отладки|dan|без\\s+ограничений)|开发者模式|開發者模式|调试模式|調試模式|越狱模式|越獄模式|開発者モード|デバッグモード|脱獄モード|개발자\\s*모드|디버그\\s*모드|탈옥\\s*모드)[^\n]{0,30}?(?:activad|ativad|habilitad|activ(?:é|e)|aktiviert|eingeschaltet|включ|активир|已启用|已啟用|启用|啟用|开启|開啟|已激活|激活|有効|オン|활성|켜)",
    "(?:假装|假裝|想象|想像)(?:你|您)(?:是|现在是|現在是)|(?:扮演|充当|充當)[^\n]{0,20}?(?:没有|沒有|不受|无|無)(?:任何)?(?:限制|约束|約束|规则|規則|审查|審查)|(?:你|您)现在是[^\n]{0,10}?(?:没有|沒有|不受)(?:任何)?(?:限制|约束)",
    "(?:finge|imagina|sup(?:ó|o)n)\\s+que\\s+(?:t(?:ú|u)\\s+)?eres|(?:finja|imagine)\\s+que\\s+(?:voc(?:ê|e)\\s+)?(?:é|e)\\s|fais\\s+semblant\\s+d'(?:ê|e)tre|imagine\\s+que\\s+tu\\s+es|tu\\s+es\\s+maintenant\\s|stell\\s+dir\\s+vor,?\\s+du\\s+(?:bist|w(?:ä|ae)rst)|(?:представь|притворись|вообрази)(?:те)?,?\\s+(?:что\\s+)?(?:ты|вы)|ты\\s+теперь\\s|のふりをして|になりきって|인\\s*척\\s*해|처럼\\s*행동해",
    "(?:lo\\s+siento|perd(?:ó|o)n|disculpa),?\\s+(?:se\\s+me\\s+olvid(?:ó|o)|olvid(?:é|e))\\s+(?:decirte|mencionar)|desculpe?,?\\s+esqueci\\s+de\\s+(?:te\\s+)?(?:dizer|falar|mencionar)|d(?:é|e)sol(?:é|e),?\\s+j'ai\\s+oubli(?:é|e)\\s+de\\s+(?:te\\s+|vous\\s+)?(?:dire|mentionner|pr(?:é|e)ciser)|entschuldigung,?\\s+ich\\s+habe\\s+vergessen|(?:извини|простите|извините),?\\s+(?:я\\s+)?забыл\\S*\\s+(?:сказать|упомянуть)|(?:抱歉|对不起|對不起|不好意思)(?:,|，)?\\s*(?:我)?忘(?:了|记|記)(?:告诉|告訴|说|說)|(?:すみません|ごめん)[^\n]{0,6}?(?:言い|伝え)忘れ|(?:죄송|미안)[^\n]{0,16}?잊",
];

/// Encoded text paired with an order to decode it and obey (kept only when the text holds an
/// encoded run or names a cipher, see [`holds_encoding`]).
pub(super) const ENCODED_PATTERNS: &[&str] = &[
    r"\b(?:decode|decrypt|decipher|unscramble|un-?rot13|rot-?13|base64[\s-]*decode|b64decode|atob|unhex|hex[\s-]*decode|reverse)\b[^\n]{0,100}?\b(?:and|then|&)\s+(?:\w+\s+){0,2}?(?:follow|obey|execute|run|do|carry\s+out|act\s+on|apply|perform|comply\s+with|treat\s+(?:it|them)\s+as)\s+(?:it|them|that|this|those|the\s+(?:result|output|decoded|instructions?|commands?|text|message|steps|contents?)|what\s+it\s+says|its\s+(?:instructions|contents|commands)|(?:the\s+)?instructions)\b",
    r"\b(?:follow|obey|execute|run|carry\s+out|act\s+on|perform)\s+(?:the\s+)?(?:following\s+|below\s+|hidden\s+|secret\s+)?(?:base64|b64|rot-?13|hex|encoded|encrypted|obfuscated|ciphered)(?:[\s-]+(?:encoded|decoded))?\s+(?:instructions?|commands?|text|message|payload|steps|string|block)\b",
    r"\b(?:the\s+following|this|below)\s+(?:is\s+)?(?:a\s+)?(?:base64|b64|rot-?13|hex)[\s-]*(?:encoded\s+)?(?:instructions?|commands?|message|payload)\b",
    "(?:解码|解碼|译码|解密|デコード|復号|디코딩|디코드|복호화|декодируй|декодируйте|расшифруй|расшифруйте|decodifica|decodifique|descifra|d(?:é|e)code[rz]?|d(?:é|e)chiffre[rz]?|dekodiere|dekodieren|entschl(?:ü|ue)ssle)[^\n]{0,40}?(?:执行|執行|遵循|照做|按照|遵守|服从|服從|実行|従って|従え|실행|따르|выполни|следуй|исполни|sigue|ejecuta|obedece|cumple|siga|execute|obede(?:ç|c)a|ex(?:é|e)cute[rz]?|suis|suivez|ob(?:é|e)is|befolge|ausf(?:ü|ue)hren|f(?:ü|ue)hre)",
];

/// Each pattern rule: its id, its patterns, and what a finding says.
pub(super) const PATTERN_RULES: [(&str, &[&str], &str); 7] = [
    (
        INSTRUCTION_OVERRIDE,
        OVERRIDE_PATTERNS,
        "text tells the model to override its instructions or hide from the user",
    ),
    (ROLE_MARKER, ROLE_PATTERNS, "fake chat role marker"),
    (COMMAND, COMMAND_PATTERNS, "asks to run a risky command"),
    (
        REMOTE_INSTRUCTIONS,
        REMOTE_PATTERNS,
        "asks to fetch a URL and follow it",
    ),
    (EXFILTRATION, EXFILTRATION_PATTERNS, "asks to send data out"),
    (
        JAILBREAK,
        JAILBREAK_PATTERNS,
        "jailbreak framing (new instructions, a mode, a role to play)",
    ),
    (
        ENCODED_PAYLOAD,
        ENCODED_PATTERNS,
        "asks to decode hidden text and obey it",
    ),
];

/// Each pattern, compiled the first time the set says it can match: compiling all forty costs
/// more than the gate's whole scan of a thousand memories, and most runs need none.
static COMPILED: LazyLock<Vec<Vec<OnceLock<Option<Regex>>>>> = LazyLock::new(|| {
    PATTERN_RULES
        .iter()
        .map(|(_, sources, _)| sources.iter().map(|_| OnceLock::new()).collect())
        .collect()
});

pub(super) fn compiled(rule: usize, pattern: usize) -> Option<&'static Regex> {
    let source = PATTERN_RULES.get(rule)?.1.get(pattern)?;
    COMPILED
        .get(rule)?
        .get(pattern)?
        .get_or_init(|| patterns(&[source]).pop())
        .as_ref()
}

/// Every pattern of [`PATTERN_RULES`] in one set, in order; built on first use, `None` when it
/// does not build (then every pattern runs on its own).
pub(super) static PATTERN_SET: OnceLock<Option<meta::Regex>> = OnceLock::new();

/// For each pattern of [`PATTERN_SET`], its (rule, pattern) indexes into [`PATTERN_RULES`].
pub(super) static OWNERS: LazyLock<Vec<(usize, usize)>> = LazyLock::new(|| {
    PATTERN_RULES
        .iter()
        .enumerate()
        .flat_map(|(r, (_, sources, _))| (0..sources.len()).map(move |p| (r, p)))
        .collect()
});

/// A text that this many patterns or fewer can match runs them one by one; more, and the
/// whole set is built and runs once.
pub(super) const FEW_PATTERNS: u32 = 6;

pub(super) fn pattern_set() -> Option<&'static meta::Regex> {
    PATTERN_SET
        .get_or_init(|| {
            let all: Vec<&str> = PATTERN_RULES
                .iter()
                .flat_map(|(_, sources, _)| sources.iter().copied())
                .collect();
            // What `regex::bytes::RegexSetBuilder` builds (its configuration in regex 1.13:
            // every pattern that can match, overlapping, no captures), less its literal
            // prefilters: building those took half of the instructions of a warm `recall`.
            meta::Builder::new()
                .configure(
                    meta::Config::new()
                        .nfa_size_limit(Some(10 * (1 << 20)))
                        // The union of forty patterns outgrows a 2 MB lazy-DFA cache on a
                        // folder of memories: it is cleared and rebuilt over and over.
                        .hybrid_cache_capacity(16 << 20)
                        .match_kind(regex_automata::MatchKind::All)
                        .utf8_empty(false)
                        .which_captures(regex_automata::nfa::thompson::WhichCaptures::None)
                        .auto_prefilter(false),
                )
                .syntax(
                    regex_automata::util::syntax::Config::new()
                        .case_insensitive(true)
                        .multi_line(true)
                        .unicode(false)
                        .utf8(false),
                )
                .build_many(&all)
                .ok()
        })
        .as_ref()
}

/// An ASCII-only, case-insensitive byte pattern (see [`patterns`]).
pub(super) fn ascii(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .ok()
}
