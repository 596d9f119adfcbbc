//! The rule table: one entry per provider token format, written from the providers' public
//! documentation of their token shapes, plus the three generic families (private key blocks,
//! credentials inside URLs, and `password = value` assignments).
//!
//! Every rule names the literal keywords that must occur near a match; the scanner runs a rule's
//! regex only around those keywords. The regex's `s` group is the secret (the whole match when
//! the group is absent). `sample` is a template that tests and `scripts/secrets-corpus.py` expand
//! into random tokens of the right shape: `{an:36}` is 36 random chars of the `an` alphabet (see
//! [`alphabet`]); `[[` and `]]` mark the secret when the sample holds more than the secret.

/// How a rule's matches are judged after the regex matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// A provider token: placeholder and entropy checks only.
    Token,
    /// A GitHub or npm token whose last 6 chars are a base62 CRC32 of the 30 before them.
    Base62Crc,
    /// A private key block.
    PrivateKey,
    /// The password part of `scheme://user:password@host`.
    UrlPassword,
    /// A `password|secret|token|api_key = value` assignment (the generic rule).
    Assignment,
    /// Base64 of `user:password` (docker `auths.*.auth`, `.npmrc` `_auth`).
    BasicAuth,
    /// The credentials of an `Authorization` header (the scheme is group `k`).
    Header,
    /// Base64 of a PEM private key block (kubeconfig `client-key-data`).
    Base64Pem,
    /// Base64 of a JSON Web Token (a token stored base64-encoded, as in a Kubernetes Secret).
    Base64Jwt,
    /// The password of a `user:password` command-line argument (`curl -u`).
    UserPassword,
    /// A key and its value joined by words or layout the assignment prefilter does not look
    /// for (``Set `KEY` to `value` ``, a CJK `：`, `buildConfigField`): judged like an
    /// assignment, with the rule's own literal keywords instead of a separator check.
    Phrase,
    /// A password written in prose or build scripts (`the password for the db is …`, `use …
    /// as the password`, `password (…)`, gradle's `password '…'`, other languages' words):
    /// a quoted literal counts from 6 chars, a bare value must look random.
    Prose,
    /// A secret other than a password given in prose, in one of several languages: a key
    /// phrase, a few words, then a verb (`the jwt secret for staging is …`, `el api key de
    /// pruebas es …`, `der dd api key für Staging lautet: …`), or the value before its key
    /// (`use … as the jwt secret`, `utiliser … comme …`, `bitte … als dd app key verwenden`).
    /// The key phrase is judged like an assignment's key, the words after it must not make it
    /// name something else (`the token rotation policy is …`), and the value must look random.
    ProseSecret,
    /// A token that opens with a fixed run of one char (X/Twitter app bearer tokens start with
    /// 21 `A`s, and hold more runs of `A` later): only its entropy past that many chars is
    /// judged, not the run check of placeholders.
    PaddedToken(usize),
}

/// Which chars continue a token, so a match inside a longer word is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tail {
    /// `[A-Za-z0-9]`.
    Alnum,
    /// `[A-Za-z0-9_-]` (base64url alphabets).
    Url,
    /// `[A-Za-z0-9+/=]` (base64 alphabets).
    Base64,
    /// No boundary check (the regex bounds the match itself).
    Free,
}

/// One detection rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SecretRule {
    /// Stable id, used in JSON, SARIF and fingerprints.
    pub id: &'static str,
    /// Human label.
    pub label: &'static str,
    /// Literals that occur in or right before every match.
    pub keywords: &'static [&'static str],
    /// Whether the keywords must match with their exact case.
    pub case_sensitive: bool,
    /// The regex, compiled without Unicode (`(?-u)`: ASCII classes, and a negated class matches
    /// any other byte, so a run of them never ends inside a UTF-8 char); group `s` is the secret,
    /// `k` the assigned name for the generic rule.
    pub pattern: &'static str,
    /// Minimal Shannon entropy (bits per char) of the secret.
    pub min_entropy: f64,
    /// How a match is judged.
    pub check: Check,
    /// Boundary class around the secret.
    pub tail: Tail,
    /// Whether a match may span lines (key blocks).
    pub multiline: bool,
    /// Template of a positive sample for tests and the corpus.
    #[cfg_attr(not(test), allow(dead_code))]
    pub sample: &'static str,
    /// A byte that must stand at this offset after the keyword, checked before any window
    /// opens (for keywords as common as `pat`).
    pub probe: Option<(usize, u8)>,
    /// Whether a secret of plain words (lowercase letters, no digit nor mark) is judged at all
    /// (a `.netrc` password): the keyword search then looks for the rule's keywords in plain
    /// prose too (`plain.rs`).
    pub plain_words: bool,
}

impl SecretRule {
    const fn token(
        id: &'static str,
        label: &'static str,
        keywords: &'static [&'static str],
        pattern: &'static str,
        min_entropy: f64,
        sample: &'static str,
    ) -> SecretRule {
        SecretRule {
            id,
            label,
            keywords,
            case_sensitive: false,
            pattern,
            min_entropy,
            check: Check::Token,
            tail: Tail::Alnum,
            multiline: false,
            sample,
            probe: None,
            plain_words: false,
        }
    }

    /// Opens a window only when `byte` stands `offset` bytes after the keyword.
    const fn probe(mut self, offset: usize, byte: u8) -> SecretRule {
        self.probe = Some((offset, byte));
        self
    }

    /// Keywords compared with their exact case (short prefixes like `SK` or `AKIA`).
    const fn exact(mut self) -> SecretRule {
        self.case_sensitive = true;
        self
    }

    /// `-` and `_` continue the token.
    const fn url_tail(mut self) -> SecretRule {
        self.tail = Tail::Url;
        self
    }

    /// `+`, `/` and `=` continue the token.
    const fn base64_tail(mut self) -> SecretRule {
        self.tail = Tail::Base64;
        self
    }

    const fn free_tail(mut self) -> SecretRule {
        self.tail = Tail::Free;
        self
    }

    const fn checked(mut self, check: Check) -> SecretRule {
        self.check = check;
        self
    }

    const fn multiline(mut self) -> SecretRule {
        self.multiline = true;
        self
    }

    const fn plain_words(mut self) -> SecretRule {
        self.plain_words = true;
        self
    }
}

/// The chars of a sample alphabet name (mirrored in `scripts/secrets-corpus.py`).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn alphabet(name: &str) -> Option<&'static str> {
    Some(match name {
        "an" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "al" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        "hex" => "0123456789abcdef",
        "HEX" => "0123456789ABCDEF",
        "up" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "upd" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "lo" => "abcdefghijklmnopqrstuvwxyz",
        "lod" => "abcdefghijklmnopqrstuvwxyz0123456789",
        "d" => "0123456789",
        "b64" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        "url" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
        "b32" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        "lb32" => "abcdefghijklmnopqrstuvwxyz234567",
        "bech" => "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
        // Generic values end at `=` and `:` (they separate the next assignment), so none here.
        "pw" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#%^&*+",
        _ => return None,
    })
}

const AWS_ID: &str = r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16})";

/// Every rule. Specific rules come first; the generic ones last.
pub(crate) static RULES: &[SecretRule] = &[
    // --- Cloud providers
    SecretRule::token("aws-access-key-id", "AWS access key ID", &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"], AWS_ID, 3.0, "AKIA{b32:16}").exact(),
    SecretRule::token(
        "aws-secret-access-key",
        "AWS secret access key",
        &["secret_access_key", "secretaccesskey", "secret-access-key", "secret access key", "aws_secret", "aws secret", "AKIA", "ASIA"],
        r#"(?i:(?:aws[ _-]?|)secret[ _-]?access[ _-]?key|aws[ _-]?secret(?:[ _-]?key)?|(?-i:(?:AKIA|ASIA)[A-Z2-7]{16}))["'\]]{0,2}[\s:=,>|"'`]{1,8}(?P<s>[A-Za-z0-9/+]{40})"#,
        3.8,
        "aws_secret_access_key = [[{b64:40}]]",
    )
    .base64_tail(),
    SecretRule::token("google-api-key", "Google API key", &["AIza"], r"(?P<s>AIza[0-9A-Za-z_-]{35})", 3.5, "AIza{url:35}").exact().url_tail(),
    SecretRule::token("google-oauth-client-secret", "Google OAuth client secret", &["GOCSPX-"], r"(?P<s>GOCSPX-[A-Za-z0-9_-]{28})", 3.5, "GOCSPX-{url:28}").url_tail(),
    SecretRule::token("google-oauth-access-token", "Google OAuth access token", &["ya29."], r"(?P<s>ya29\.[0-9A-Za-z_-]{40,})", 4.0, "ya29.{url:120}").url_tail(),
    SecretRule::token(
        "azure-storage-account-key",
        "Azure storage account key",
        &["AccountKey="],
        r"AccountKey=(?P<s>[A-Za-z0-9+/]{86}==)",
        4.5,
        "DefaultEndpointsProtocol=https;AccountName=acct{lod:6};AccountKey=[[{b64:86}==]];EndpointSuffix=core.windows.net",
    )
    .base64_tail(),
    SecretRule::token("azure-ad-client-secret", "Azure AD client secret", &["Q~"], r"(?P<s>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})", 3.5, "{an:3}8Q~{an:34}").exact().url_tail(),
    SecretRule::token("alibaba-access-key-id", "Alibaba Cloud AccessKey ID", &["LTAI"], r"(?P<s>LTAI[A-Za-z0-9]{12,20})", 3.0, "LTAI{an:20}").exact(),
    SecretRule::token("digitalocean-pat", "DigitalOcean personal access token", &["dop_v1_"], r"(?P<s>dop_v1_[a-f0-9]{64})", 3.0, "dop_v1_{hex:64}"),
    SecretRule::token("digitalocean-oauth-token", "DigitalOcean OAuth token", &["doo_v1_"], r"(?P<s>doo_v1_[a-f0-9]{64})", 3.0, "doo_v1_{hex:64}"),
    SecretRule::token("digitalocean-refresh-token", "DigitalOcean refresh token", &["dor_v1_"], r"(?P<s>dor_v1_[a-f0-9]{64})", 3.0, "dor_v1_{hex:64}"),
    SecretRule::token("flyio-token", "Fly.io access token", &["fo1_", "fm2_"], r"(?P<s>(?:fo1_[A-Za-z0-9_-]{43}|fm2_[A-Za-z0-9+/]{100,}={0,2}))", 4.0, "fo1_{url:43}").url_tail(),
    SecretRule::token("heroku-api-key", "Heroku API key", &["HRKU-"], r"(?P<s>HRKU-AA[A-Za-z0-9_-]{58})", 4.0, "HRKU-AA{url:58}").url_tail(),
    SecretRule::token("supabase-pat", "Supabase personal access token", &["sbp_"], r"(?P<s>sbp_[a-f0-9]{40})", 3.0, "sbp_{hex:40}"),
    SecretRule::token("supabase-secret-key", "Supabase secret key", &["sb_secret_"], r"(?P<s>sb_secret_[A-Za-z0-9_-]{31,64})", 3.5, "sb_secret_{url:31}").url_tail(),
    SecretRule::token("netlify-pat", "Netlify personal access token", &["nfp_"], r"(?P<s>nfp_[A-Za-z0-9]{36})", 3.5, "nfp_{an:36}"),
    SecretRule::token("planetscale-token", "PlanetScale token or password", &["pscale_tkn_", "pscale_pw_", "pscale_oauth_"], r"(?P<s>pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64})", 3.5, "pscale_tkn_{an:43}").url_tail(),
    SecretRule::token("databricks-token", "Databricks access token", &["dapi"], r"(?P<s>dapi[a-f0-9]{32}(?:-[0-9])?)", 3.0, "dapi{hex:32}"),
    SecretRule::token("doppler-token", "Doppler token", &["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."], r"(?P<s>dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,30}\.)?[A-Za-z0-9]{40,44})", 3.5, "dp.pt.{an:43}"),
    SecretRule::token("terraform-cloud-token", "HashiCorp Terraform Cloud API token", &[".atlasv1."], r"(?P<s>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70})", 3.8, "{an:14}.atlasv1.{url:67}").url_tail(),
    SecretRule::token("vault-service-token", "HashiCorp Vault token", &["hvs.", "hvb.", "hvr."], r"(?P<s>hv[sbr]\.[A-Za-z0-9_-]{24,400})", 3.8, "hvs.{url:91}").url_tail(),
    SecretRule::token("pulumi-access-token", "Pulumi access token", &["pul-"], r"(?P<s>pul-[a-f0-9]{40})", 3.0, "pul-{hex:40}"),
    // --- Source hosting and CI
    SecretRule::token("github-pat", "GitHub personal access token", &["ghp_"], r"(?P<s>ghp_[A-Za-z0-9]{36})", 3.5, "ghp_{an:36}").checked(Check::Base62Crc),
    SecretRule::token("github-oauth-token", "GitHub OAuth access token", &["gho_"], r"(?P<s>gho_[A-Za-z0-9]{36})", 3.5, "gho_{an:36}").checked(Check::Base62Crc),
    SecretRule::token("github-user-to-server-token", "GitHub App user-to-server token", &["ghu_"], r"(?P<s>ghu_[A-Za-z0-9]{36})", 3.5, "ghu_{an:36}").checked(Check::Base62Crc),
    SecretRule::token("github-server-to-server-token", "GitHub App installation token", &["ghs_"], r"(?P<s>ghs_[A-Za-z0-9]{36})", 3.5, "ghs_{an:36}").checked(Check::Base62Crc),
    SecretRule::token("github-refresh-token", "GitHub refresh token", &["ghr_"], r"(?P<s>ghr_[A-Za-z0-9]{36,76})", 3.5, "ghr_{an:36}").checked(Check::Base62Crc),
    SecretRule::token("github-fine-grained-pat", "GitHub fine-grained personal access token", &["github_pat_"], r"(?P<s>github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})", 4.0, "github_pat_{an:22}_{an:59}"),
    SecretRule::token("gitlab-pat", "GitLab personal access token", &["glpat-"], r"(?P<s>glpat-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?)", 3.5, "glpat-{url:20}").url_tail(),
    SecretRule::token("gitlab-runner-token", "GitLab runner authentication token", &["glrt-"], r"(?P<s>glrt-(?:t\d_)?[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?)", 3.5, "glrt-{url:20}").url_tail(),
    SecretRule::token("gitlab-runner-registration-token", "GitLab runner registration token", &["GR1348941"], r"(?P<s>GR1348941[A-Za-z0-9_-]{20})", 3.5, "GR1348941{url:20}").url_tail(),
    SecretRule::token("gitlab-deploy-token", "GitLab deploy token", &["gldt-"], r"(?P<s>gldt-[A-Za-z0-9_-]{20,})", 3.5, "gldt-{url:20}").url_tail(),
    SecretRule::token("gitlab-pipeline-trigger-token", "GitLab pipeline trigger token", &["glptt-"], r"(?P<s>glptt-[0-9a-f]{40})", 3.0, "glptt-{hex:40}"),
    SecretRule::token("gitlab-feed-token", "GitLab feed token", &["glft-"], r"(?P<s>glft-[A-Za-z0-9_-]{20,})", 3.5, "glft-{url:20}").url_tail(),
    SecretRule::token("gitlab-oauth-app-secret", "GitLab OAuth application secret", &["gloas-"], r"(?P<s>gloas-[A-Za-z0-9_-]{64,})", 3.8, "gloas-{url:64}").url_tail(),
    SecretRule::token("gitlab-agent-token", "GitLab agent token", &["glagent-"], r"(?P<s>glagent-[A-Za-z0-9_-]{50,})", 3.8, "glagent-{url:50}").url_tail(),
    SecretRule::token("gitlab-ci-job-token", "GitLab CI job token", &["glcbt-"], r"(?P<s>glcbt-(?:[0-9a-fA-F]{1,5}_)?[A-Za-z0-9_-]{20,})", 3.5, "glcbt-{url:20}").url_tail(),
    SecretRule::token("gitlab-scim-token", "GitLab SCIM token", &["glsoat-"], r"(?P<s>glsoat-[A-Za-z0-9_-]{20,})", 3.5, "glsoat-{url:20}").url_tail(),
    SecretRule::token("bitbucket-app-password", "Bitbucket app password", &["ATBB"], r"(?P<s>ATBB[A-Za-z0-9_=.-]{32})", 3.5, "ATBB{an:32}").exact().url_tail(),
    SecretRule::token("atlassian-api-token", "Atlassian API token", &["ATATT3"], r"(?P<s>ATATT3[A-Za-z0-9_=-]{150,250})", 4.0, "ATATT3{url:186}").exact().url_tail(),
    SecretRule::token("buildkite-token", "Buildkite API token", &["bkua_"], r"(?P<s>bkua_[a-f0-9]{40})", 3.0, "bkua_{hex:40}"),
    SecretRule::token("circleci-pat", "CircleCI personal API token", &["CCIPAT_"], r"(?P<s>CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40})", 3.5, "CCIPAT_{an:22}_{hex:40}"),
    SecretRule::token("clojars-token", "Clojars deploy token", &["CLOJARS_"], r"(?P<s>CLOJARS_[a-z0-9]{60})", 3.5, "CLOJARS_{lod:60}").exact(),
    SecretRule::token("docker-hub-pat", "Docker Hub access token", &["dckr_pat_", "dckr_oat_"], r"(?P<s>dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,32})", 3.5, "dckr_pat_{url:27}").url_tail(),
    // --- Package registries
    SecretRule::token("npm-token", "npm access token", &["npm_"], r"(?P<s>npm_[A-Za-z0-9]{36})", 3.5, "npm_{an:36}").checked(Check::Base62Crc),
    SecretRule::token("pypi-token", "PyPI upload token", &["pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"], r"(?P<s>pypi-Ag(?:EIcHlwaS5vcmc|ENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,})", 4.0, "pypi-AgEIcHlwaS5vcmc{url:70}").exact().url_tail(),
    SecretRule::token("rubygems-api-key", "RubyGems API key", &["rubygems_"], r"(?P<s>rubygems_[a-f0-9]{48})", 3.0, "rubygems_{hex:48}"),
    SecretRule::token("huggingface-token", "Hugging Face access token", &["hf_"], r"(?P<s>hf_[A-Za-z]{34})", 3.8, "hf_{al:34}"),
    SecretRule::token("huggingface-org-token", "Hugging Face organization token", &["api_org_"], r"(?P<s>api_org_[A-Za-z]{34})", 3.8, "api_org_{al:34}"),
    // --- AI providers
    SecretRule::token("openai-api-key", "OpenAI API key", &["T3BlbkFJ"], r"(?P<s>sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,200}T3BlbkFJ[A-Za-z0-9_-]{20,200})", 4.0, "sk-proj-{url:74}T3BlbkFJ{url:74}").exact().url_tail(),
    SecretRule::token("openai-project-key", "OpenAI project API key", &["sk-proj-"], r"(?P<s>sk-proj-[A-Za-z0-9_-]{40,250})", 4.0, "sk-proj-{url:156}").url_tail(),
    SecretRule::token("openai-service-account-key", "OpenAI service account key", &["sk-svcacct-"], r"(?P<s>sk-svcacct-[A-Za-z0-9_-]{40,250})", 4.0, "sk-svcacct-{url:156}").url_tail(),
    SecretRule::token("openai-admin-key", "OpenAI admin key", &["sk-admin-"], r"(?P<s>sk-admin-[A-Za-z0-9_-]{40,250})", 4.0, "sk-admin-{url:156}").url_tail(),
    SecretRule::token("anthropic-api-key", "Anthropic API key", &["sk-ant-api03-"], r"(?P<s>sk-ant-api03-[A-Za-z0-9_-]{93}AA)", 4.0, "sk-ant-api03-{url:93}AA").url_tail(),
    SecretRule::token("anthropic-admin-key", "Anthropic admin key", &["sk-ant-admin01-"], r"(?P<s>sk-ant-admin01-[A-Za-z0-9_-]{93}AA)", 4.0, "sk-ant-admin01-{url:93}AA").url_tail(),
    SecretRule::token("openrouter-api-key", "OpenRouter API key", &["sk-or-v1-"], r"(?P<s>sk-or-v1-[a-f0-9]{64})", 3.0, "sk-or-v1-{hex:64}"),
    SecretRule::token("groq-api-key", "Groq API key", &["gsk_"], r"(?P<s>gsk_[A-Za-z0-9]{52})", 4.0, "gsk_{an:52}"),
    SecretRule::token("xai-api-key", "xAI API key", &["xai-"], r"(?P<s>xai-[A-Za-z0-9]{80})", 4.0, "xai-{an:80}"),
    SecretRule::token("replicate-api-token", "Replicate API token", &["r8_"], r"(?P<s>r8_[A-Za-z0-9]{37})", 3.8, "r8_{an:37}"),
    SecretRule::token("perplexity-api-key", "Perplexity API key", &["pplx-"], r"(?P<s>pplx-[A-Za-z0-9]{48})", 4.0, "pplx-{an:48}"),
    SecretRule::token("langsmith-api-key", "LangSmith API key", &["lsv2_pt_", "lsv2_sk_"], r"(?P<s>lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})", 3.0, "lsv2_pt_{hex:32}_{hex:10}"),
    SecretRule::token("tavily-api-key", "Tavily API key", &["tvly-"], r"(?P<s>tvly-(?:dev-|prod-)?[A-Za-z0-9]{32})", 3.8, "tvly-{an:32}"),
    SecretRule::token("fireworks-api-key", "Fireworks AI API key", &["fw_"], r"(?P<s>fw_[A-Za-z0-9]{24})", 3.8, "fw_{an:24}"),
    // --- Communication
    SecretRule::token("slack-bot-token", "Slack bot token", &["xoxb-"], r"(?P<s>xoxb-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}|xoxb-[0-9]{8,14}-[A-Za-z0-9]{18,26})", 3.5, "xoxb-{d:12}-{d:13}-{an:24}"),
    SecretRule::token("slack-user-token", "Slack user token", &["xoxp-"], r"(?P<s>xoxp-[0-9]{10,13}-[0-9]{10,13}-[0-9]{10,13}-[a-f0-9]{32})", 3.5, "xoxp-{d:12}-{d:13}-{d:13}-{hex:32}"),
    SecretRule::token("slack-config-token", "Slack configuration token", &["xoxe.xox", "xoxe-"], r"(?P<s>xoxe(?:\.xox[bp])?-1-[A-Za-z0-9]{140,170})", 4.0, "xoxe.xoxp-1-{an:163}"),
    SecretRule::token("slack-app-token", "Slack app-level token", &["xapp-"], r"(?P<s>xapp-[0-9]-[A-Z0-9]{8,12}-[0-9]{10,13}-[a-f0-9]{64})", 3.5, "xapp-1-A{upd:10}-{d:13}-{hex:64}"),
    SecretRule::token("slack-legacy-token", "Slack legacy token", &["xoxa-", "xoxr-", "xoxs-", "xoxo-"], r"(?P<s>xox[aors]-[0-9]{1,13}-[0-9A-Za-z-]{20,200})", 3.5, "xoxs-{d:12}-{d:12}-{d:12}-{hex:64}").url_tail(),
    SecretRule::token("slack-webhook-url", "Slack incoming webhook URL", &["hooks.slack.com/"], r"(?P<s>https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{8,12}/[A-Z0-9]{8,12}/[A-Za-z0-9]{24,50})", 3.5, "https://hooks.slack.com/services/T{upd:10}/B{upd:10}/{an:24}"),
    SecretRule::token("discord-webhook-url", "Discord webhook URL", &["/api/webhooks/"], r"(?P<s>https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,70})", 3.5, "https://discord.com/api/webhooks/{d:19}/{url:68}").url_tail(),
    SecretRule::token("teams-webhook-url", "Microsoft Teams webhook URL", &[".webhook.office.com/", "outlook.office.com/webhook/"], r"(?P<s>https://(?:[a-z0-9-]+\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/[a-f0-9-]{36}@[a-f0-9-]{36}/IncomingWebhook/[a-f0-9]{32}/[a-f0-9-]{36}(?:/[A-Za-z0-9_-]{40,60})?)", 3.5, "https://acme.webhook.office.com/webhookb2/{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}@{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}/IncomingWebhook/{hex:32}/{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}").url_tail(),
    SecretRule::token("telegram-bot-token", "Telegram bot token", &[":AA"], r"(?P<s>[0-9]{8,10}:AA[A-Za-z0-9_-]{30,33})", 3.5, "{d:10}:AA{url:33}").exact().url_tail(),
    SecretRule::token("sendgrid-api-key", "SendGrid API key", &["SG."], r"(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})", 4.0, "SG.{url:22}.{url:43}").exact().url_tail(),
    SecretRule::token("twilio-api-key", "Twilio API key", &["SK"], r"(?P<s>SK[0-9a-f]{32})", 3.0, "SK{hex:32}").exact(),
    SecretRule::token("mailchimp-api-key", "Mailchimp API key", &["-us"], r"(?P<s>[0-9a-f]{32}-us[0-9]{1,2})", 3.0, "{hex:32}-us{d:2}"),
    SecretRule::token("mailgun-api-key", "Mailgun API key", &["key-"], r"(?P<s>key-[0-9a-f]{32})", 3.0, "key-{hex:32}"),
    SecretRule::token("brevo-api-key", "Brevo (Sendinblue) API key", &["xkeysib-"], r"(?P<s>xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})", 3.5, "xkeysib-{hex:64}-{an:16}"),
    // --- Payments and commerce
    SecretRule::token("stripe-secret-key", "Stripe secret key", &["sk_live_", "sk_test_"], r"(?P<s>sk_(?:live|test)_[0-9A-Za-z]{24,247})", 3.5, "sk_live_{an:99}"),
    SecretRule::token("stripe-restricted-key", "Stripe restricted key", &["rk_live_", "rk_test_"], r"(?P<s>rk_(?:live|test)_[0-9A-Za-z]{24,247})", 3.5, "rk_live_{an:99}"),
    SecretRule::token("stripe-webhook-secret", "Stripe webhook signing secret", &["whsec_"], r"(?P<s>whsec_[A-Za-z0-9+/]{32,64})", 3.8, "whsec_{an:32}"),
    SecretRule::token("square-access-token", "Square access token", &["EAAA", "sq0atp-"], r"(?P<s>(?:EAAA[A-Za-z0-9_-]{60}|sq0atp-[A-Za-z0-9_-]{22}))", 3.8, "EAAA{url:60}").exact().url_tail(),
    SecretRule::token("square-oauth-secret", "Square OAuth secret", &["sq0csp-"], r"(?P<s>sq0csp-[A-Za-z0-9_-]{43})", 3.8, "sq0csp-{url:43}").url_tail(),
    SecretRule::token("shopify-access-token", "Shopify access token", &["shpat_"], r"(?P<s>shpat_[a-fA-F0-9]{32})", 3.0, "shpat_{hex:32}"),
    SecretRule::token("shopify-custom-app-token", "Shopify custom app access token", &["shpca_"], r"(?P<s>shpca_[a-fA-F0-9]{32})", 3.0, "shpca_{hex:32}"),
    SecretRule::token("shopify-private-app-token", "Shopify private app access token", &["shppa_"], r"(?P<s>shppa_[a-fA-F0-9]{32})", 3.0, "shppa_{hex:32}"),
    SecretRule::token("shopify-shared-secret", "Shopify shared secret", &["shpss_"], r"(?P<s>shpss_[a-fA-F0-9]{32})", 3.0, "shpss_{hex:32}"),
    SecretRule::token("shippo-api-token", "Shippo API token", &["shippo_live_", "shippo_test_"], r"(?P<s>shippo_(?:live|test)_[a-f0-9]{40})", 3.0, "shippo_live_{hex:40}"),
    // --- Productivity and observability
    SecretRule::token("postman-api-key", "Postman API key", &["PMAK-"], r"(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34})", 3.0, "PMAK-{hex:24}-{hex:34}"),
    SecretRule::token("linear-api-key", "Linear API key", &["lin_api_", "lin_oauth_"], r"(?P<s>lin_(?:api|oauth)_[A-Za-z0-9]{40})", 3.8, "lin_api_{an:40}"),
    SecretRule::token("notion-token", "Notion integration token", &["ntn_", "secret_"], r"(?P<s>(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}))", 4.0, "ntn_{d:11}{an:35}"),
    SecretRule::token("figma-pat", "Figma personal access token", &["figd_"], r"(?P<s>figd_[A-Za-z0-9_-]{40})", 3.8, "figd_{url:40}").url_tail(),
    SecretRule::token("contentful-token", "Contentful personal access token", &["CFPAT-"], r"(?P<s>CFPAT-[A-Za-z0-9_-]{43})", 3.8, "CFPAT-{url:43}").url_tail(),
    SecretRule::token("typeform-token", "Typeform personal access token", &["tfp_"], r"(?P<s>tfp_[A-Za-z0-9_.=-]{59})", 3.8, "tfp_{url:59}").url_tail(),
    SecretRule::token("readme-api-key", "ReadMe API key", &["rdme_"], r"(?P<s>rdme_[a-z0-9]{70})", 3.8, "rdme_{lod:70}"),
    SecretRule::token("prefect-api-key", "Prefect API key", &["pnu_"], r"(?P<s>pnu_[A-Za-z0-9]{36})", 3.8, "pnu_{an:36}"),
    SecretRule::token("grafana-cloud-token", "Grafana Cloud API token", &["glc_"], r"(?P<s>glc_[A-Za-z0-9+/]{32,}={0,2})", 4.0, "glc_{b64:120}").base64_tail(),
    SecretRule::token("grafana-service-account-token", "Grafana service account token", &["glsa_"], r"(?P<s>glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})", 3.8, "glsa_{an:32}_{hex:8}"),
    SecretRule::token("grafana-api-key", "Grafana API key", &["eyJrIjoi"], r"(?P<s>eyJrIjoi[A-Za-z0-9]{70,}={0,2})", 4.0, "eyJrIjoi{an:90}").exact().base64_tail(),
    SecretRule::token("sentry-user-token", "Sentry user auth token", &["sntryu_"], r"(?P<s>sntryu_[a-f0-9]{64})", 3.0, "sntryu_{hex:64}"),
    SecretRule::token("sentry-org-token", "Sentry organization auth token", &["sntrys_"], r"(?P<s>sntrys_eyJpYXQiO[A-Za-z0-9+/=_-]{60,})", 4.0, "sntrys_eyJpYXQiO{b64:120}").base64_tail(),
    SecretRule::token("new-relic-user-key", "New Relic user API key", &["NRAK-"], r"(?P<s>NRAK-[A-Z0-9]{27})", 3.5, "NRAK-{upd:27}").exact(),
    SecretRule::token("dynatrace-token", "Dynatrace API token", &["dt0c01."], r"(?P<s>dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})", 3.8, "dt0c01.{upd:24}.{upd:64}"),
    SecretRule::token("frameio-token", "Frame.io API token", &["fio-u-"], r"(?P<s>fio-u-[A-Za-z0-9_=-]{64})", 3.8, "fio-u-{url:64}").url_tail(),
    SecretRule::token("mapbox-secret-token", "Mapbox secret token", &["sk.eyJ"], r"(?P<s>sk\.eyJ[A-Za-z0-9_-]{50,200}\.[A-Za-z0-9_-]{20,50})", 4.0, "sk.eyJ{url:60}.{url:22}").exact().url_tail(),
    SecretRule::token("twitter-access-token", "X / Twitter user access token", &["twitter"], r"(?i:twitter)[^\n]{0,60}?(?P<s>[0-9]{15,25}-[A-Za-z0-9]{20,40})", 3.5, "TWITTER_ACCESS_TOKEN=[[{d:19}-{an:40}]]"),
    SecretRule::token("dropbox-token", "Dropbox access token", &["sl."], r"(?P<s>sl\.[A-Za-z0-9_-]{130,})", 4.0, "sl.{url:138}").exact().url_tail(),
    SecretRule::token("scalingo-token", "Scalingo API token", &["tk-us-"], r"(?P<s>tk-us-[A-Za-z0-9_-]{48})", 3.8, "tk-us-{url:48}").url_tail(),
    // --- Secrets managers and encryption
    SecretRule::token("age-secret-key", "age secret key", &["AGE-SECRET-KEY-1"], r"(?P<s>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})", 3.5, "AGE-SECRET-KEY-1{bech:58}"),
    SecretRule::token("onepassword-service-account-token", "1Password service account token", &["ops_eyJ"], r"(?P<s>ops_eyJ[A-Za-z0-9+/_-]{250,}={0,3})", 4.5, "ops_eyJ{b64:300}").base64_tail(),
    SecretRule::token("onepassword-secret-key", "1Password secret key", &["A3-"], r"(?P<s>A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})", 3.3, "A3-{upd:6}-{upd:6}-{upd:5}-{upd:5}-{upd:5}-{upd:5}").exact(),
    SecretRule::token("jwt-base64", "JSON Web Token, base64-encoded", &["ZXlK"], r"(?P<s>ZXlK[A-Za-z0-9+/]{60,}={0,2})", 4.0, "ZXlKaGJHY2lPaUpJVXpJMU5pSXNJblI1Y0NJNklrcFhWQ0o5LmV5SnpkV0lpT2lKa1pYQnNiM2tpTENKcFlYUWlPakUzTURBd01EQXdNREI5Lm5yS3BVNHhjbVJfNWx0S1FFanBOV29VTkE0QjJKVlpYaTVuMTdGZVNzQ0E=").exact().base64_tail().checked(Check::Base64Jwt),
    SecretRule::token("jwt", "JSON Web Token", &["eyJ"], r"(?P<s>eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})", 4.0, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{url:60}.{url:43}").exact().url_tail(),
    // --- More vendors with a prefix of their own (no keyword needed)
    SecretRule::token("deno-deploy-token", "Deno Deploy access token", &["ddp_", "ddw_"], r"(?P<s>dd[pw]_[A-Za-z0-9]{36})", 3.8, "ddp_{an:36}"),
    SecretRule::token("defined-networking-key", "Defined Networking (Nebula) API key", &["dnkey-"], r"(?P<s>dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52})", 3.8, "dnkey-{b32:26}-{b32:52}").url_tail(),
    SecretRule::token("segment-public-api-token", "Segment public API token", &["sgp_"], r"(?P<s>sgp_[A-Za-z0-9]{64})", 4.0, "sgp_{an:64}"),
    SecretRule::token("firecrawl-api-key", "Firecrawl API key", &["fc-"], r"(?P<s>fc-[a-f0-9]{32})", 3.0, "fc-{hex:32}").url_tail(),
    SecretRule::token("stackhawk-api-key", "StackHawk API key", &["hawk."], r"(?P<s>hawk\.[A-Za-z0-9_-]{20}\.[A-Za-z0-9_-]{20})", 3.5, "hawk.{an:20}.{an:20}").url_tail(),
    SecretRule::token("aws-appsync-api-key", "AWS AppSync API key", &["da2-"], r"(?P<s>da2-[a-z0-9]{26})", 3.3, "da2-{lod:26}"),
    SecretRule::token("launchdarkly-key", "LaunchDarkly SDK, mobile or API access key", &["sdk-", "mob-", "api-"], r"(?P<s>(?i:sdk|mob|api)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})", 3.0, "sdk-{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}").probe(8, b'-').url_tail(),
    SecretRule::token("amazon-mws-token", "Amazon MWS auth token", &["amzn.mws."], r"(?P<s>amzn\.mws\.[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})", 3.0, "amzn.mws.{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}").url_tail(),
    SecretRule::token("plaid-access-token", "Plaid access token", &["access-sandbox-", "access-development-", "access-production-"], r"(?P<s>access-(?:sandbox|development|production)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})", 3.0, "access-production-{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}").url_tail(),
    SecretRule::token("authress-key", "Authress service client access key", &[".acc_", ".acc-"], r"(?P<s>(?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120})", 3.5, "sc_{lod:26}.{lod:4}.acc_{lod:16}.MC4CAQAwBQYDK2VwBCIEI{b64:22}").base64_tail(),
    SecretRule::token("flyio-macaroon", "Fly.io macaroon token", &["FlyV1 fm"], r"(?P<s>FlyV1 fm[12][ar]?_[A-Za-z0-9+/=,_-]{100,})", 4.0, "FlyV1 fm2_{b64:160}").exact().base64_tail(),
    SecretRule::token(
        "kubernetes-bootstrap-token",
        "Kubernetes bootstrap token",
        &["--token", "bootstrap-token", "bootstrap_token", "bootstrap token"],
        r#"(?i:--token|bootstrap[ _-]token)["']?[ \t]*[=: \t]["']?[ \t]*(?P<s>[a-z0-9]{6}\.[a-z0-9]{16})"#,
        3.0,
        "kubeadm join 10.0.0.5:6443 --token [[{lod:6}.{lod:16}]] --discovery-token-unsafe-skip-ca-verification",
    ),
    SecretRule::token("tailscale-key", "Tailscale auth or API key", &["tskey-"], r"(?P<s>tskey-(?:[a-z]{3,8}-)?[A-Za-z0-9]{6,24}-[A-Za-z0-9]{16,64})", 3.5, "tskey-auth-k{an:11}CNTRL-{an:33}"),
    SecretRule::token("airtable-api-key", "Airtable legacy API key", &["airtable"], r"(?i:airtable)[^\n]{0,40}?(?P<s>(?-i:key)[A-Za-z0-9]{14})", 3.0, "AIRTABLE_API_KEY=[[key{an:14}]]"),
    SecretRule::token("airtable-pat", "Airtable personal access token", &["pat"], r"(?P<s>pat[A-Za-z0-9]{14}\.[a-f0-9]{64})", 3.5, "pat{an:14}.{hex:64}").exact().probe(14, b'.'),
    SecretRule::token("azure-devops-pat", "Azure DevOps personal access token", &["AZDO"], r"(?P<s>[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})", 4.0, "{an:52}JQQJ99{an:18}AZDO{an:4}").exact(),
    SecretRule::token("new-relic-key", "New Relic API key", &["NRAA-", "NRII-", "NRIQ-", "NRRA-", "NRJS-", "NRAL"], r"(?P<s>NRAA-[a-f0-9]{27}|NRI[IQ]-[A-Za-z0-9_-]{32}|NRRA-[a-f0-9]{42}|NRJS-[a-f0-9]{19}|[a-z0-9]{36}NRAL)", 3.0, "NRII-{url:32}").exact().url_tail(),
    SecretRule::token("new-relic-pixie-key", "New Relic Pixie API or deploy key", &["px-api-", "px-dep-"], r"(?P<s>px-(?:api|dep)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})", 3.0, "px-api-{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}"),
    SecretRule::token("sonarqube-token", "SonarQube token", &["squ_", "sqp_", "sqa_"], r"(?P<s>sq[upa]_[a-f0-9]{40})", 3.0, "squ_{hex:40}"),
    SecretRule::token("sourcegraph-token", "Sourcegraph access token", &["sgp_"], r"(?P<s>sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40})", 3.0, "sgp_{hex:16}_{hex:40}"),
    SecretRule::token("artifactory-token", "JFrog Artifactory API or reference token", &["AKCp", "cmVmdGtu"], r"(?P<s>AKCp[A-Za-z0-9]{69}|cmVmdGtu[A-Za-z0-9]{56})", 4.0, "AKCp{an:69}").exact(),
    SecretRule::token("octopus-deploy-key", "Octopus Deploy API key", &["API-"], r"(?P<s>API-[A-Z0-9]{26})", 3.5, "API-{upd:26}").exact(),
    SecretRule::token("easypost-key", "EasyPost API key", &["EZAK", "EZTK"], r"(?P<s>EZ[AT]K[A-Za-z0-9]{54})", 4.0, "EZAK{an:54}").exact(),
    SecretRule::token("duffel-token", "Duffel API token", &["duffel_live_", "duffel_test_"], r"(?P<s>duffel_(?:live|test)_[A-Za-z0-9_=-]{43})", 3.8, "duffel_live_{url:43}").url_tail(),
    SecretRule::token("flutterwave-secret-key", "Flutterwave secret or encryption key", &["FLWSECK"], r"(?P<s>FLWSECK(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?)", 3.0, "FLWSECK_TEST-{hex:32}-X").exact(),
    SecretRule::token("infracost-token", "Infracost API token", &["ico-"], r"(?P<s>ico-[A-Za-z0-9]{32})", 3.8, "ico-{an:32}"),
    SecretRule::token("maxmind-license-key", "MaxMind license key", &["_mmk"], r"(?P<s>[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)", 3.8, "{an:6}_{an:29}_mmk"),
    SecretRule::token("openshift-token", "OpenShift user token", &["sha256~"], r"(?P<s>sha256~[A-Za-z0-9_-]{43})", 3.8, "sha256~{url:43}").url_tail(),
    SecretRule::token("cockroachdb-cloud-key", "CockroachDB Cloud service account API key", &["CCDB1_"], r"(?P<s>CCDB1_[A-Za-z0-9]{22}_[A-Za-z0-9]{40})", 4.0, "CCDB1_{an:22}_{an:40}").exact(),
    SecretRule::token("aikido-token", "Aikido CI token or client secret", &["AIK_CI_", "AIK_SECRET_"], r"(?P<s>AIK_CI_[A-Za-z0-9]{20,44}|AIK_SECRET_[A-Za-z0-9]{64})", 3.8, "AIK_SECRET_{an:64}").exact(),
    SecretRule::token("apify-api-token", "Apify API token", &["apify_api_"], r"(?P<s>apify_api_[A-Za-z0-9]{34,38})", 3.8, "apify_api_{an:36}"),
    SecretRule::token("cerebras-api-key", "Cerebras API key", &["csk-"], r"(?P<s>csk-[a-z0-9]{48})", 3.8, "csk-{lod:48}"),
    SecretRule::token("configcat-sdk-key", "ConfigCat SDK key", &["configcat-sdk-1/"], r"(?P<s>configcat-sdk-1/[A-Za-z0-9_-]{22}/[A-Za-z0-9_-]{22})", 3.8, "configcat-sdk-1/{url:22}/{url:22}").url_tail(),
    SecretRule::token("datastax-astra-token", "DataStax Astra application token", &["AstraCS:"], r"(?P<s>AstraCS:[A-Za-z0-9]{20,40}(?::[a-f0-9]{64})?)", 3.5, "AstraCS:{al:24}:{hex:64}").exact(),
    SecretRule::token("devcycle-server-key", "DevCycle server SDK key", &["dvc_server_"], r"(?P<s>dvc_server_[A-Za-z0-9]{8,32}(?:_[a-f0-9]{7})?)", 3.3, "dvc_server_{an:24}"),
    SecretRule::token("cfxre-server-key", "Cfx.re (FiveM, RedM) server license key", &["cfxk_"], r"(?P<s>cfxk_[A-Za-z0-9_-]{20,100})", 3.5, "cfxk_{an:20}_{an:6}").exact().url_tail(),
    SecretRule::token("devin-api-key", "Devin (Cognition) personal or service API key", &["apk_"], r"(?P<s>apk_(?:user_)?[A-Za-z0-9+/]{80,180}={0,2})", 4.0, "apk_{b64:96}").exact().base64_tail(),
    SecretRule::token("devin-service-user-token", "Devin (Cognition) service user token", &["cog_"], r"(?P<s>cog_[a-z2-7]{52})", 3.5, "cog_{lb32:52}").exact(),
    SecretRule::token("alibaba-sts-token", "Alibaba Cloud STS security token", &["CAIS"], r"(?P<s>CAIS[A-Za-z0-9+/]{60,1000}={0,2})", 4.0, "CAIS{b64:240}").exact().base64_tail(),
    SecretRule::token("facebook-app-token", "Facebook app access token (app id|secret)", &["facebook", "fb_"], r"(?i:facebook|fb_)[^\n]{0,60}?(?P<s>[0-9]{15,16}(?:\||%7[Cc])[A-Za-z0-9_-]{27,40})", 3.5, "FACEBOOK_APP_TOKEN=[[{d:15}|{url:27}]]").url_tail(),
    SecretRule::token("elastic-serverless-key", "Elastic Cloud Serverless API key", &["essu_"], r"(?P<s>essu_[A-Za-z0-9_-]{60,200}={0,2})", 4.0, "essu_{url:80}").base64_tail(),
    SecretRule::token("mongodb-atlas-sa-secret", "MongoDB Atlas service account client secret", &["mdb_sa_sk_"], r"(?P<s>mdb_sa_sk_[A-Za-z0-9_-]{40})", 3.8, "mdb_sa_sk_{url:40}").url_tail(),
    SecretRule::token("nvidia-api-key", "NVIDIA NIM / NGC API key", &["nvapi-"], r"(?P<s>nvapi-[A-Za-z0-9_-]{60,70})", 4.0, "nvapi-{url:64}").url_tail(),
    SecretRule::token("onesignal-key", "OneSignal app or organization API key", &["os_v2_app_", "os_v2_org_"], r"(?P<s>os_v2_(?:app|org)_[a-z2-7]{103})", 4.0, "os_v2_app_{lo:103}"),
    SecretRule::token("paddle-api-key", "Paddle API key", &["pdl_live_apikey_", "pdl_sdbx_apikey_"], r"(?P<s>pdl_(?:live|sdbx)_apikey_[a-z0-9]{26}_[A-Za-z0-9]{22}_[A-Za-z0-9]{3})", 4.0, "pdl_live_apikey_{lod:26}_{an:22}_{an:3}"),
    SecretRule::token("pinterest-access-token", "Pinterest access token", &["pina_"], r"(?P<s>pina_[A-Za-z0-9_-]{20,200})", 4.0, "pina_{url:96}").url_tail(),
    SecretRule::token("polar-token", "Polar access token", &["polar_pat_", "polar_oat_", "polar_at_"], r"(?P<s>polar_(?:pat|oat|at)_[A-Za-z0-9_-]{20,100})", 3.8, "polar_pat_{url:43}").url_tail(),
    SecretRule::token("ramp-client-secret", "Ramp OAuth client secret", &["ramp_sec_"], r"(?P<s>ramp_sec_[A-Za-z0-9]{48})", 4.0, "ramp_sec_{an:48}"),
    SecretRule::token("rootly-api-key", "Rootly API key", &["rootly_"], r"(?P<s>rootly_[a-f0-9]{64})", 3.0, "rootly_{hex:64}"),
    SecretRule::token("samsara-api-token", "Samsara API token", &["samsara_api_"], r"(?P<s>samsara_api_[A-Za-z0-9]{26,32})", 3.8, "samsara_api_{an:30}"),
    SecretRule::token("together-api-key", "Together AI API key", &["tgp_v1_"], r"(?P<s>tgp_v1_[A-Za-z0-9_-]{43})", 3.8, "tgp_v1_{url:43}").url_tail(),
    SecretRule::token("unkey-root-key", "Unkey root key", &["unkey_"], r"(?P<s>unkey_[A-Za-z0-9]{20,32})", 3.8, "unkey_{an:28}"),
    SecretRule::token("wakatime-api-key", "WakaTime API key", &["waka_"], r"(?P<s>waka_[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}|waka_[a-z0-9]{36,64})", 3.0, "waka_{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}").url_tail(),
    SecretRule::token("wandb-api-key", "Weights & Biases API key", &["wandb_v1_"], r"(?P<s>wandb_v1_[A-Za-z0-9_]{77})", 4.0, "wandb_v1_{an:77}").url_tail(),
    SecretRule::token("zuplo-api-key", "Zuplo consumer API key", &["zpka_"], r"(?P<s>zpka_[a-z0-9]{32}_[a-f0-9]{8})", 3.5, "zpka_{lod:32}_{hex:8}"),
    SecretRule::token("settlemint-token", "SettleMint access token", &["sm_aat_", "sm_pat_", "sm_sat_"], r"(?P<s>sm_[aps]at_[A-Za-z0-9]{16})", 3.3, "sm_pat_{an:16}"),
    SecretRule::token("cloudflare-origin-ca-key", "Cloudflare Origin CA key", &["v1.0-"], r"(?P<s>v1\.0-[a-f0-9]{24}-[a-f0-9]{146})", 3.0, "v1.0-{hex:24}-{hex:146}"),
    SecretRule::token("clickhouse-secret-key", "ClickHouse Cloud API secret key", &["4b1d"], r"(?P<s>4b1d[A-Za-z0-9]{38})", 4.0, "4b1d{an:38}").exact(),
    SecretRule::token("aws-bedrock-api-key", "Amazon Bedrock API key", &["ABSK", "bedrock-api-key-"], r"(?P<s>ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/%=&-]{20,})", 4.0, "ABSK{b64:128}").exact().base64_tail(),
    SecretRule::token("adobe-client-secret", "Adobe client secret", &["p8e-"], r"(?P<s>p8e-[A-Za-z0-9]{32})", 3.8, "p8e-{an:32}"),
    SecretRule::token("intra42-client-secret", "42 intra client secret", &["s-s4t2"], r"(?P<s>s-s4t2(?:ud|af)-[a-f0-9]{64})", 3.0, "s-s4t2ud-{hex:64}"),
    SecretRule::token("harness-token", "Harness API token", &["pat.", "sat."], r"(?P<s>[ps]at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})", 4.0, "pat.{url:22}.{an:24}.{an:20}").url_tail(),
    SecretRule::token("facebook-access-token", "Facebook access token", &["EAAC", "EAAM", "EAAG", "EAAB"], r"(?P<s>EAA[BCGM][A-Za-z0-9]{100,})", 4.0, "EAAC{an:120}").exact(),
    SecretRule::token("gitlab-other-token", "GitLab feature flag or incoming mail token", &["glffct-", "glimt-"], r"(?P<s>glffct-[A-Za-z0-9_-]{20}|glimt-[A-Za-z0-9_-]{25})", 3.0, "glimt-{url:25}").url_tail(),
    SecretRule::token("hubspot-private-app-token", "HubSpot private app token", &["pat-na1-", "pat-na2-", "pat-eu1-", "pat-ap1-"], r"(?P<s>pat-(?:na[12]|eu1|ap1)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})", 3.0, "pat-na1-{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}"),
    SecretRule::token("pinecone-api-key", "Pinecone API key", &["pcsk_"], r"(?P<s>pcsk_[A-Za-z0-9_]{40,100})", 4.0, "pcsk_{an:5}_{an:62}"),
    SecretRule::token("langfuse-secret-key", "Langfuse secret key", &["sk-lf-"], r"(?P<s>sk-lf-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})", 3.0, "sk-lf-{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}"),
    SecretRule::token("posthog-personal-key", "PostHog personal API key", &["phx_"], r"(?P<s>phx_[A-Za-z0-9]{43})", 4.0, "phx_{an:43}"),
    SecretRule::token("resend-api-key", "Resend API key", &["re_"], r"(?P<s>re_[A-Za-z0-9]{8,10}_[A-Za-z0-9]{20,32})", 3.8, "re_{an:8}_{an:24}").exact(),
    SecretRule::token("render-api-key", "Render API key", &["rnd_"], r"(?P<s>rnd_[A-Za-z0-9]{32})", 3.8, "rnd_{an:32}"),
    SecretRule::token("neon-api-key", "Neon API key", &["napi_"], r"(?P<s>napi_[a-z0-9]{64})", 3.8, "napi_{lod:64}"),
    SecretRule::token("vercel-token", "Vercel access token", &["vcp_", "vci_", "vca_", "vcr_", "vck_"], r"(?P<s>vc[pcikar]_[A-Za-z0-9]{24,64})", 3.8, "vcp_{an:56}"),
    SecretRule::token("brevo-smtp-key", "Brevo (Sendinblue) SMTP key", &["xsmtpsib-"], r"(?P<s>xsmtpsib-[a-f0-9]{64}-[A-Za-z0-9]{16})", 3.5, "xsmtpsib-{hex:64}-{an:16}"),
    SecretRule::token("mailersend-api-key", "MailerSend API key", &["mlsn."], r"(?P<s>mlsn\.[a-f0-9]{64})", 3.0, "mlsn.{hex:64}"),
    SecretRule::token("pubnub-secret-key", "PubNub secret key", &["sec-c-"], r"(?P<s>sec-c-[A-Za-z0-9]{40,60})", 3.8, "sec-c-{an:48}"),
    SecretRule::token("yandex-token", "Yandex Cloud API key or OAuth token", &["AQVN", "y0_"], r"(?P<s>AQVN[A-Za-z0-9_-]{35,38}|y0_[A-Za-z0-9_-]{55,60})", 4.0, "AQVN{url:36}").exact().url_tail(),
    SecretRule::token("tencent-secret-id", "Tencent Cloud SecretId", &["AKID"], r"(?P<s>AKID[A-Za-z0-9]{32})", 3.8, "AKID{an:32}").exact(),
    SecretRule::token("digitalocean-spaces-key", "DigitalOcean Spaces access key", &["DO00"], r"(?P<s>DO00[A-Z0-9]{16})", 3.0, "DO00{upd:16}").exact(),
    SecretRule::token("nuget-api-key", "NuGet API key", &["oy2"], r"(?P<s>oy2[a-z0-9]{43})", 3.8, "oy2{lod:43}").exact(),
    SecretRule::token("crates-io-token", "crates.io API token", &["cio"], r"(?P<s>cio[A-Za-z0-9]{32})", 4.0, "cio{an:32}").exact(),
    SecretRule::token("telnyx-api-key", "Telnyx API key", &["KEY0", "KEY1", "KEY2", "KEY3", "KEY4", "KEY5", "KEY6", "KEY7", "KEY8", "KEY9", "KEYA", "KEYB", "KEYC", "KEYD", "KEYE", "KEYF"], r"(?P<s>KEY[0-9A-F]{32}_[A-Za-z0-9]{22})", 3.5, "KEY{HEX:32}_{an:22}").exact(),
    SecretRule::token("jumpcloud-api-key", "JumpCloud API key", &["jca_"], r"(?P<s>jca_[A-Za-z0-9]{36})", 3.8, "jca_{an:36}"),
    SecretRule::token("statsig-secret-key", "Statsig server secret key", &["secret-"], r"(?P<s>secret-[A-Za-z0-9]{43})", 4.0, "secret-{an:43}"),
    SecretRule::token("woocommerce-key", "WooCommerce consumer key or secret", &["ck_", "cs_"], r"(?P<s>c[ks]_[a-f0-9]{40})", 3.0, "cs_{hex:40}").exact(),
    SecretRule::token("braintree-access-token", "Braintree access token", &["access_token$"], r"(?P<s>access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32})", 3.5, "access_token$production${lod:16}${hex:32}"),
    SecretRule::token("google-oauth-refresh-token", "Google OAuth refresh token", &["1//0"], r"(?P<s>1//0[A-Za-z0-9_-]{40,})", 4.0, "1//0{url:98}").url_tail(),
    SecretRule::token("firebase-fcm-server-key", "Firebase Cloud Messaging server key", &[":APA91b"], r"(?P<s>AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{134})", 4.0, "AAAA{url:7}:APA91b{url:134}").exact().url_tail(),
    SecretRule::token("azure-sas-token", "Azure shared access signature", &["sig="], r"[?&;]sig=(?P<s>[A-Za-z0-9%+/]{40,120}(?:%3D|=){0,2})", 4.0, "https://acct{lod:6}.blob.core.windows.net/c?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2027-01-01T00:00:00Z&sig=[[{an:43}%3D]]").free_tail(),
    SecretRule::token("azure-shared-access-key", "Azure Service Bus, Event Hubs or IoT shared access key", &["SharedAccessKey=", ";Secret="], r"(?:SharedAccessKey|;Secret)=(?P<s>[A-Za-z0-9+/]{42,44}={0,2})", 4.0, "Endpoint=sb://ns{lod:6}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=[[{b64:43}=]]").base64_tail(),
    SecretRule::token("azure-container-registry-password", "Azure Container Registry password", &["+ACR"], r"(?P<s>[A-Za-z0-9+/]{42}\+ACR[A-Za-z0-9]{6})", 4.0, "{an:42}+ACR{an:6}").exact().base64_tail(),
    SecretRule::token("wireguard-private-key", "WireGuard private or preshared key", &["privatekey", "presharedkey"], r"(?i:(?:private|preshared)key)[ \t]*=[ \t]*(?P<s>[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=)", 3.5, "PrivateKey = [[{b64:42}A=]]").base64_tail(),
    SecretRule::token("twitch-stream-key", "Twitch stream key", &["live_"], r"(?P<s>live_[0-9]{6,12}_[A-Za-z0-9]{30})", 3.8, "live_{d:9}_{an:30}"),
    SecretRule::token("salesforce-session-token", "Salesforce access or session token", &["00D"], r"(?P<s>00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,300})", 4.0, "00D{an:12}!{an:96}").exact(),
    SecretRule::token("teamcity-token", "TeamCity access token", &["eyJ0eXAiOiAiVENWMiJ9"], r"(?P<s>eyJ0eXAiOiAiVENWMiJ9\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,})", 4.0, "eyJ0eXAiOiAiVENWMiJ9.{url:36}.{url:48}").exact().url_tail(),
    SecretRule::token("jina-api-key", "Jina AI API key", &["jina_"], r"(?P<s>jina_[A-Za-z0-9]{60})", 4.0, "jina_{hex:32}{an:28}"),
    SecretRule::token("dependency-track-key", "Dependency-Track API key", &["odt_"], r"(?P<s>odt_[A-Za-z0-9]{32,40})", 4.0, "odt_{an:32}"),
    SecretRule::token("adafruit-io-key", "Adafruit IO key", &["aio_"], r"(?P<s>aio_[A-Za-z0-9]{28})", 3.8, "aio_{an:28}"),
    SecretRule::token("vault-unseal-key", "HashiCorp Vault unseal key", &["unseal"], r"(?i:unseal key(?: [0-9]{1,2})?:|operator unseal)[ \t]+(?P<s>[A-Za-z0-9+/]{43,44}={0,2})", 4.0, "Unseal Key 1: [[{b64:44}]]").base64_tail(),
    SecretRule::token("jenkins-initial-password", "Jenkins initial admin password", &["password to proceed to installation"], r"(?i:password to proceed to installation):?\s{1,256}(?P<s>[a-f0-9]{32})", 3.0, "Please use the following password to proceed to installation:\n\n[[{hex:32}]]").multiline(),
    SecretRule::token("truenas-api-key", "TrueNAS API key", &["login_with_api_key"], r#"login_with_api_key"[^\[]{0,80}\[\s*"(?P<s>[0-9]{1,5}-[A-Za-z0-9]{64})""#, 4.0, "{\"msg\": \"method\", \"method\": \"auth.login_with_api_key\", \"params\": [\"[[3-{an:64}]]\"]}").url_tail().multiline(),
    SecretRule::token("sonarqube-login", "SonarQube token given as sonar.login", &["sonar.login", "sonarlogin", "sonar_login"], r#"(?i:sonar[._]?login)["']?[ \t]*(?:=|:|,)[ \t]*["']?[ \t]*["']?(?P<s>[a-f0-9]{40})"#, 3.0, "-Dsonar.login=[[{hex:40}]]"),
    SecretRule::token(
        "cli-password-argument",
        "Password on a command line",
        &["-password", "-passwd", "-pass ", "-pass=", "-pwd", "psexec", "sshpass", "mysql", "docker login", "podman login", "nerdctl login", "buildah login", "skopeo login", "registry login", "oras login", "redis-cli"],
        r#"(?:(?:^|[ \t])--?(?i:password|passwd|pass|pwd)(?:[ \t]+|=)|(?i:psexec)[^\n]{0,200}?[ \t]-u[ \t]+[^\s]+[ \t]+-p[ \t]+|(?i:sshpass)[ \t]+-p[ \t]*|(?i:mysql(?:dump|admin)?)[ \t][^\n]{0,160}?[ \t]-p|(?i:docker|podman|nerdctl|buildah|skopeo|helm[ \t]+registry|oras)[ \t]+login[ \t][^\n|;&]{0,160}?[ \t]-p[ \t]+|(?i:redis-cli)[ \t][^\n|;&]{0,160}?[ \t]-a[ \t]+)(?:"(?P<s>[^"\s]{4,128})"|'(?P<s2>[^'\s]{4,128})'|(?P<s3>[^\s"'`]{4,128}))"#,
        2.0,
        "mysql --user=app --password=[[{an:16}]] -h db.internal",
    )
    .free_tail()
    .checked(Check::UserPassword),
    SecretRule::token(
        "password-stdin-literal",
        "Literal piped into a --password-stdin login",
        &["password-stdin"],
        r#"(?:echo|printf)[ \t]+(?:-n[ \t]+)?(?:"(?P<s>[^"\s$]{6,200})"|'(?P<s2>[^'\s]{6,200})'|(?P<s3>[^\s"'`|$]{6,200}))[ \t]*\|[ \t]*[^\n]{0,120}?--password-stdin"#,
        2.0,
        "echo \"[[{an:40}]]\" | docker login ghcr.io -u ops --password-stdin",
    )
    .free_tail()
    .checked(Check::UserPassword),
    SecretRule::token(
        "netrc-password",
        "Password in a .netrc entry",
        &["machine"],
        r#"(?:(?m:^)|[\s`"'(])machine[ \t]+[^\s]+\s+(?:login[ \t]+[^\s]+\s+)?password[ \t]+(?P<s>[^\s`"']{4,128})"#,
        2.0,
        "machine git.internal login ci password [[{an:20}]]",
    )
    .free_tail()
    .checked(Check::UserPassword)
    .multiline()
    .plain_words(),
    SecretRule::token("thingsboard-access-token", "ThingsBoard device access token", &["thingsboard"], r"(?i:thingsboard)[A-Za-z0-9.:-]{0,40}/api/v1/(?P<s>[A-Za-z0-9]{20})/", 3.3, "https://thingsboard.cloud/api/v1/[[{lod:20}]]/telemetry").free_tail(),
    SecretRule::token("codeclimate-reporter-id", "Code Climate test reporter ID", &["cc_test_reporter_id"], r#"(?i:cc_test_reporter_id)["']?[ \t]*[:=][ \t]*["']?(?P<s>[a-f0-9]{64})"#, 3.0, "CC_TEST_REPORTER_ID: [[{hex:64}]]"),
    SecretRule::token("zapier-webhook-url", "Zapier webhook URL", &["hooks.zapier.com/"], r"(?P<s>https://hooks\.zapier\.com/hooks/catch/[0-9]{4,12}/[a-z0-9]{5,12}/?)", 2.5, "https://hooks.zapier.com/hooks/catch/{d:7}/{lod:7}/").free_tail(),
    SecretRule::token("mattermost-webhook-url", "Mattermost incoming webhook URL", &["/hooks/"], r"(?P<s>https?://[A-Za-z0-9.-]{3,100}(?::[0-9]{2,5})?/hooks/[a-z0-9]{26})", 3.5, "https://chat.acme.io/hooks/{lod:26}"),
    SecretRule::token("gitlab-session-cookie", "GitLab session cookie", &["_gitlab_session="], r"_gitlab_session=(?P<s>[0-9a-z]{32})", 3.0, "Cookie: _gitlab_session=[[{hex:32}]]"),
    SecretRule::token("sidekiq-secret", "Sidekiq Enterprise or Pro credentials", &["contribsys__com"], r#"(?i:bundle_(?:enterprise|gems)__contribsys__com)["']?[ \t]*(?::=|=|:)[ \t]*["']?(?P<s>[a-f0-9]{8}:[a-f0-9]{8})"#, 2.5, "BUNDLE_ENTERPRISE__CONTRIBSYS__COM=[[{hex:8}:{hex:8}]]").free_tail(),
    SecretRule::token("npmrc-auth-token", "npm registry auth token in .npmrc", &[":_authtoken="], r#"/:_(?i:authToken)=["']?(?P<s>[A-Za-z0-9_.+/=-]{20,200})"#, 3.3, "//npm.internal/:_authToken=[[{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}]]").url_tail(),
    SecretRule::token(
        "vault-legacy-token",
        "HashiCorp Vault token (legacy s./b./r. form) given as a Vault token",
        &["vault_token", "vaulttoken", "vault-token", "vault token", "vault_client_token", "vault-client-token", "vaultclienttoken", "vault client token", "vault login"],
        r#"(?i:vault[ _-]?(?:client[ _-]?)?token|vault login)["']?[ \t]*(?:[:=]|[ \t])[ \t]*["']?(?-i:(?P<s>[sbr]\.[A-Za-z0-9]{24}(?:[A-Za-z0-9_-]{60,300})?))"#,
        3.8,
        "export VAULT_TOKEN=[[s.{an:24}]]",
    )
    .url_tail(),
    SecretRule::token(
        "discord-bot-token",
        "Discord bot token",
        &["discord"],
        r"(?i:discord)[^\n]{0,120}?(?-i:\b(?P<s>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}))",
        4.0,
        "DISCORD_BOT_TOKEN=[[M{an:25}.{url:6}.{url:38}]]",
    )
    .url_tail(),
    SecretRule::token("clickup-api-token", "ClickUp personal API token", &["pk_"], r"(?P<s>pk_[0-9]{6,10}_[A-Za-z0-9]{32})", 3.5, "pk_{d:8}_{upd:32}"),
    SecretRule::token("x-bearer-token", "X (Twitter) app bearer token", &["AAAAAAAAAAAA"], r"(?P<s>A{21,24}[A-Za-z0-9%]{40,160})", 4.0, "AAAAAAAAAAAAAAAAAAAAA{an:20}%3D{an:50}").exact().checked(Check::PaddedToken(21)),
    SecretRule::token(
        "okta-api-token",
        "Okta API token",
        &["okta"],
        r"(?i:okta)[\s\S]{0,160}?(?-i:\b(?P<s>00[A-Za-z0-9_-]{40}))",
        3.5,
        "OKTA_API_TOKEN=[[00{url:40}]]",
    )
    .url_tail()
    .multiline(),
    SecretRule::token(
        "pgpass-password",
        "Password in a .pgpass entry",
        &[":5432:", ":5433:", ":6432:", ":*:"],
        r#"(?:(?m:^)|[ \t`"'=\x80-\xFF])[A-Za-z0-9.*_-]{1,100}:(?:[0-9]{2,5}|\*):[A-Za-z0-9_*.$-]{1,64}:[A-Za-z0-9_.@*$-]{1,64}:(?P<s>[^\s:`"']{6,128})(?:[ \t\r`"']|(?m:$))"#,
        2.5,
        "db.internal:5432:app:app_rw:[[{an:20}]]",
    )
    .free_tail()
    .checked(Check::UserPassword),
    SecretRule::token(
        "dotnet-credential",
        "Password in a NetworkCredential or DirectoryEntry call",
        &["credential(", "entry("],
        r#"(?i:NetworkCredential\s*\(\s*"[^"\n]{0,200}"\s*,|DirectoryEntry\s*\(\s*"[^"\n]{0,200}"\s*,\s*"[^"\n]{0,200}"\s*,)\s*"(?P<s>[^"\n]{4,128})""#,
        2.0,
        "var creds = new NetworkCredential(\"ci\", \"[[{an:20}]]\");",
    )
    .free_tail()
    .checked(Check::UserPassword)
    .multiline(),
    SecretRule::token(
        "build-config-field",
        "Secret in an Android buildConfigField",
        &["configfield"],
        r#"buildConfigField\s*\(?\s*["']String["']\s*,\s*["'](?P<k>[A-Za-z0-9_]{1,64})["']\s*,\s*(?:'\\?"(?P<s>[^"'\\\s]{6,200})\\?"'|"\\"(?P<s2>[^"\\\s]{6,200})\\"")"#,
        3.0,
        "buildConfigField 'String', 'API_KEY', '\"[[{an:32}]]\"'",
    )
    .free_tail()
    .checked(Check::Phrase),
    SecretRule::token(
        "prose-assignment",
        "Secret given in prose as `KEY` to `value`",
        &["` to `"],
        r"`(?P<k>[A-Za-z0-9_.-]{2,64})` to `(?P<s>[^`\s]{6,200})`",
        3.0,
        "Set `DB_PASSWORD` to `[[{pw:20}]]` in your shell.",
    )
    .free_tail()
    .checked(Check::Phrase),
    SecretRule::token(
        "cjk-assignment",
        "Secret after a CJK colon or copula (`token：…`, `key为 …`, `keyは …`)",
        &["：", "为", "是", "は"],
        r"(?i)(?P<k>(?:[a-z0-9_.-]{1,24}[ ]){0,3}[a-z0-9_.-]{0,40}?(?:pass|pwd|secret|token|key|pat|cred)[a-z0-9_.-]{0,40}(?:[ ][a-z0-9_.-]{1,24}){0,2})[ \t]{0,4}(?:\xEF\xBC\x9A|\xE3\x81\xAF|\xE6\x98\xAF(?:\xEF\xBC\x9A)?|\xE4\xB8\xBA)[ \t]{0,4}(?P<s>[A-Za-z0-9+/=_~.!@#$%^&*-]{6,199}[A-Za-z0-9+/=_~!@#$%^&*-])",
        3.0,
        "预发环境的 smtp password 是：[[{pw:20}]]",
    )
    .free_tail()
    .checked(Check::Phrase),
    // --- Credentials in headers and credential files
    SecretRule::token(
        "authorization-header",
        "Credentials in an Authorization header",
        &["authorization", "bearer", "ssws"],
        r#"(?i:(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["'`]?[ \t]*(?P<k>bearer|token|ssws|basic|apikey|api-key|key|splunk|sso-key|oauth|jwt|zoho-oauthtoken|klaviyo-api-key|otoken|pat)?|(?P<b>bearer|ssws))[ \t]+(?P<s>[A-Za-z0-9._~+/-]{12,2000}={0,2})"#,
        3.0,
        "curl -H \"Authorization: Bearer [[{an:40}]]\" https://api.internal/v1",
    )
    .free_tail()
    .checked(Check::Header),
    SecretRule::token(
        "basic-auth-credentials",
        "Base64 user and password (docker config auth, .npmrc _auth)",
        &["\"auth\"", "'auth'", "_auth", "auth:", "auth=", "auth =", "auth :"],
        r#"(?i:"auth"|'auth'|_auth|\bauth)["']?[ \t]*[:=][ \t]*["']?(?P<s>[A-Za-z0-9+/]{6,400}={0,2})"#,
        3.0,
        "{\"auths\": {\"registry.internal\": {\"auth\": \"[[ZGVwbG95OlNnN2tQcTJ4TG05dlc=]]\"}}}",
    )
    .base64_tail()
    .checked(Check::BasicAuth),
    SecretRule::token(
        "curl-user-password",
        "Password in a curl --user argument",
        &["-u ", "-u=", "--user"],
        r#"(?:^|[ \t])(?:-u|--user)[ =]["']?(?P<k>[^\s:'"]{0,64}):["']?(?P<s>[^\s'"]{6,128})"#,
        2.5,
        "curl -u deploy:[[{an:20}]] https://ci.internal/api",
    )
    .free_tail()
    .checked(Check::UserPassword),
    SecretRule::token(
        "base64-private-key",
        "Base64-encoded private key (kubeconfig client-key-data)",
        &["LS0tLS1CRUdJTi"],
        r"(?P<s>LS0tLS1CRUdJTi[A-Za-z0-9+/]{100,}={0,2})",
        4.0,
        "client-key-data: [[LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBZ3REN2ZHVU92OGZ3TmZCYjBqWHhVSlI0UVFBQWFiVlZsb1phWFp4bUN1MVZTaElxbUFySW50bjlvWDk4V0hnQwp0ekMxdXdCNUZYWlBmN3N0ZzdOdmxFM0xhcnVTcmpMbm9uV0tUbjlVR0t6RWVzZzYxU0hFL3FhUVEwTlYzdlRICjFsUzZWNitvOWpsOHpTT3dXL3JYTCtpdUl0RW51aitobHJXQjhncGo3a3RzanMwc1c1dXFTVlp1OWtLMVYxbWkKRFpVNFhjWEY4Y1ZHUk9vWDlZRTE3c3dKYWV2QXN6ajBPdkVtTWxybHRRMTB2N1NVdzlaUkxzQXdOcFNwdzIzYwovbDl3eFVobS9nMUNvbitrUzlEUDRmbEZSeUI5amY4RWYraVRrbC84UENRbWtybEQ3c3VRRUFnNk5ZQjIyOXg4Ci0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0tCg==]]",
    )
    .base64_tail()
    .checked(Check::Base64Pem)
    .multiline(),
    // --- Generic families
    SecretRule::token(
        "private-key",
        "Private key",
        &["PRIVATE KEY"],
        r"(?P<s>-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----[\s\S]{64,}?-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----)",
        4.0,
        "-----BEGIN RSA PRIVATE KEY-----\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:40}==\n-----END RSA PRIVATE KEY-----",
    )
    .free_tail()
    .checked(Check::PrivateKey)
    .multiline(),
    SecretRule::token(
        "url-credentials",
        "Password in a URL",
        &["://"],
        r#"[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@?#"'<>`]{0,100}:(?P<s>[^\s:/@?#"'<>`]{3,200})@[a-zA-Z0-9\[]"#,
        2.0,
        "postgres://app:[[{an:20}]]@db.internal:5432/app",
    )
    .free_tail()
    .checked(Check::UrlPassword),
    SecretRule::token(
        "config-key-value",
        "Secret in a key/value config entry",
        &["value="],
        r#"(?i)key[ \t]*=[ \t]*"(?P<k>[^"\n]{1,60})"[ \t]+value[ \t]*=[ \t]*"(?P<s>[^"\s]{6,200})""#,
        3.0,
        "<add key=\"SmtpPassword\" value=\"[[{pw:20}]]\" />",
    )
    .free_tail()
    .checked(Check::Assignment),
    SecretRule::token(
        "generic-secret",
        "Generic secret assignment",
        &["password", "passwd", "passphrase", "passcode", "_pass", "-pass", ".pass", "pass=", "pass:", "pass\"", "pass'", "pass ", "pwd", "secret", "token", "key", "cred", "_pat", "-pat", " pat", "pat=", "pat:", "pat =", "pat :", "pat\"", "pat'"],
        r#"(?i)(?P<k>(?:[a-z0-9_.-]{1,24}[ ]){0,3}[a-z0-9_.-]{0,40}?(?:pass|pwd|secret|token|key|pat|cred)[a-z0-9_.-]{0,40})[*_"'\]`]{0,3}(?:[ \t]{0,4}:[ \t]{0,4}(?:&(?:'static[ \t]+)?)?[a-z_][a-z0-9_.]{0,24}(?:<[a-z0-9_, ]{1,24}>)?\??[ \t]+=|[ \t]+string[ \t]+=|[ \t]{0,16}(?::=|=>|[=!]==?|=|:|\||[ \t](?:is|was|lautet|ist)(?:[ \t]|:)))[ \t]{0,16}(?:\*\*)?[ \t]{0,5}(?-i:\\?"(?P<s>[^"\s\\]{6,200})\\?"|'(?P<s2>[^'\s]{6,200})'|`(?P<s3>[^`\s]{6,200})`|(?P<s4>[^\s"'`,;<>]{5,199}[^\s"'`,;<>.)\]}*|:]))"#,
        3.0,
        "db_password = \"[[{pw:20}]]\"",
    )
    .free_tail()
    .checked(Check::Assignment),
    SecretRule::token(
        "prose-password",
        "Password given in prose or a build script",
        &["password", "passwort", "passphrase", "passwd", "contraseña", "contrasena", "mot de passe", "senha", "パスワード"],
        r#"(?i)(?P<k6>(?:password|passphrase|passwd)[A-Za-z0-9_.-]*)[\"']?[ \t]*[:=][ \t]*[\"'](?P<s6>[a-z]+(?: [a-z]+)+)[\"']|(?P<k>(?:password|passwort|passphrase|passwd|contrase(?:\xC3\xB1|n)a|mot de passe|senha|\xE3\x83\x91\xE3\x82\xB9\xE3\x83\xAF\xE3\x83\xBC\xE3\x83\x89)(?:[ \t][^\n]*?)?)(?:[ \t](?:is|was|es|est|\xC3\xA9|ist|lautet|era|war)[ \t]*:?|[ \t]*:|\xE3\x81\xAF)[ \t]*["'`]?(?P<s>[A-Za-z0-9!#$%&*+./:=?@^_~-]{3,}[A-Za-z0-9!#$%&*+/=?@^_~-])|(?:^|[^A-Za-z0-9_])(?:use|try|usa|utilise[rz]?|bitte|verwende)[ \t]+["'`]?(?P<s2>[A-Za-z0-9!#$%&*+./:=?@^_~-]{3,}[A-Za-z0-9!#$%&*+/=?@^_~-])["'`]?[ \t]+(?:as|como|comme|als)[ \t][A-Za-z0-9_ \t-]*(?:password|passwort|passphrase|passwd|contrase(?:\xC3\xB1|n)a|mot de passe|senha|\xE3\x83\x91\xE3\x82\xB9\xE3\x83\xAF\xE3\x83\xBC\xE3\x83\x89)|["'`](?P<s3>[A-Za-z0-9!#$%&*+./:=?@^_~-]{3,}[A-Za-z0-9!#$%&*+/=?@^_~-])["'`][ \t]+(?:is|was)[ \t][A-Za-z0-9_ \t-]*(?:password|passwort|passphrase|passwd|contrase(?:\xC3\xB1|n)a|mot de passe|senha|\xE3\x83\x91\xE3\x82\xB9\xE3\x83\xAF\xE3\x83\xBC\xE3\x83\x89)|(?:password|passwort|passphrase|passwd|contrase(?:\xC3\xB1|n)a|mot de passe|senha|\xE3\x83\x91\xE3\x82\xB9\xE3\x83\xAF\xE3\x83\xBC\xE3\x83\x89)[ \t]*\([ \t]*["'`]?(?P<s4>[A-Za-z0-9!#$%&*+./:=?@^_~-]{3,}[A-Za-z0-9!#$%&*+/=?@^_~-])["'`]?[ \t]*\)|(?:(?m:^)|[ \t])(?:password|passwd)(?:\.set)?(?:[ \t]*\([ \t]*|[ \t]+)[\"'](?P<s5>[^\"'\s]{4,})[\"'][ \t]*\)?[ \t]*;?[ \t]*\r?(?m:$)"#,
        3.0,
        "The password for the staging db is [[{an:12}7q]] until Friday.",
    )
    .free_tail()
    .checked(Check::Prose),
    SecretRule::token(
        "prose-secret",
        "Secret given in prose (`the api key for staging is …`, `use … as the jwt secret`)",
        &["secret", "token", "key", "pass ", "pass.", "pass,", "pwd", "credential", "creds", " pat ", " pat.", " pat,"],
        r#"(?P<k>(?:[A-Za-z0-9_.-]+[ ]){0,3}[A-Za-z0-9_.-]*?(?i:pass|pwd|secret|token|key|cred|pat)[A-Za-z0-9_.-]*(?:[ ][^\n]*?)?)(?:[ \t]+(?i:is|was|es|est|ist|lautet|era|war|\xC3\xA9|\xC3\xA8)(?:[ \t]*:)?[ \t]+["'`]?(?P<s>[A-Za-z0-9+/=_~.!@#$%^&*()-]*[A-Za-z0-9+/=_~!@#$%^&*-])|[ \t]*\([ \t]*["'`]?(?P<s3>[A-Za-z0-9+/=_~.!@#$%^&*()-]*[A-Za-z0-9+/=_~!@#$%^&*-])["'`]?[ \t]*\))|(?:^|[^A-Za-z0-9_])(?i:use|usa|usar|utilise[rz]?|bitte|verwende|nimm|set)[ \t]+["'`]?(?P<s2>[A-Za-z0-9+/=_~.!@#$%^&*()-]*[A-Za-z0-9+/=_~!@#$%^&*-])["'`]?[ \t]+(?i:as|als|como|comme)[ \t]+(?P<k6>(?:[A-Za-z0-9_.-]+[ ]){0,4}[A-Za-z0-9_.-]*?(?i:pass|pwd|secret|token|key|cred|pat)[A-Za-z0-9_.-]*)"#,
        3.0,
        "The jwt secret for the staging cluster is [[{an:32}]] until Friday.",
    )
    .free_tail()
    .checked(Check::ProseSecret),
];
