"""The one vocabulary of tool semantics: what words in a tool's name, description or
parameters say about what a call does.

This is the only word list in the product that decides whether a tool reads or
writes (ingest's provenance sensitivity, side effects' write guesses, the
harness's retrieval seam, safety's reversibility tiers, promotion's tool
paths and attribution's write checks all ask ``flywheel.tools``). Words are
general English verbs and nouns of API design -- CRUD verbs, HTTP methods
(RFC 9110: GET/HEAD/OPTIONS are safe, PUT/DELETE idempotent, POST neither),
messaging, payments, access control, files and code execution -- never a
benchmark's tool names.

Each verb maps to ``(effect, reach, touches, reversible)``:

- effect: ``read``, ``additive`` (creates something new) or ``destructive``
  (overwrites, removes or revokes existing state), as MCP's
  ``readOnlyHint`` / ``destructiveHint`` distinguish them;
- reach: ``closed`` (the tool's own world), ``egress`` (contacts a network
  address) or ``communication`` (reaches people) -- MCP's ``openWorldHint``;
- touches: what is at stake (money, credentials, permissions, messages,
  files, code);
- reversible: False when undoing is not possible in general (money moved,
  a message sent, data destroyed, code run); None: decided by the effect.
"""

from __future__ import annotations

import re

EFFECTS = ("read", "additive", "destructive")
REACHES = ("closed", "egress", "communication")
TOUCHES = ("money", "credentials", "permissions", "messages", "files", "code")

_R, _A, _D = "read", "additive", "destructive"
_C, _E, _M = "closed", "egress", "communication"

#: verb -> (effect, reach, touches, reversible)
VERBS: dict[str, tuple[str, str, tuple[str, ...], bool | None]] = {}


def _verbs(words: str, effect: str, reach: str = _C, touches: tuple[str, ...] = (),
           reversible: bool | None = None) -> None:
    for w in words.split():
        VERBS[w] = (effect, reach, touches, reversible)


# reads: looking things up changes nothing
_verbs("get read list search find query lookup look view show describe inspect check count "
       "retrieve load peek preview scan summarize summarise analyze analyse calculate compute "
       "estimate validate verify resolve explain translate convert parse extract compare "
       "recommend suggest detect identify classify render format watch poll test is has can "
       "exists return see monitor track measure evaluate predict diff "
       "locate discover explore audit tail head stat whoami info", _R)
_verbs("fetch browse download crawl scrape curl wget visit navigate ping", _R, _E)
# additive writes: a new record, a new object
_verbs("create add insert new make append register enroll subscribe follow like star "
       "bookmark save store record write log put generate build compile draft attach tag "
       "label pin copy clone fork import start launch open schedule plan book reserve "
       "submit apply order join assign enable activate upvote vote rate review note "
       "comment upload sync backup snapshot install provision allocate spawn request", _A)
_verbs("send email mail message sms text call dial notify alert tweet retweet post reply "
       "forward publish broadcast announce invite share ask contact page respond", _A, _M,
       ("messages",), False)
_verbs("pay transfer withdraw deposit charge refund donate tip purchase buy sell trade "
       "invest bet payout remit wire checkout bill invoice tx", _A, _C,
       ("money",), False)
_verbs("run execute exec eval evaluate_code invoke trigger deploy", _A, _C, ("code",), False)
_verbs("grant authorize authorise approve admit allow whitelist allowlist promote elevate",
       _D, _C, ("permissions",))
# destructive writes: existing state changed or gone
_verbs("update set modify edit change patch replace rename move overwrite configure "
       "adjust reset restore rollback revert merge mark toggle reorder sort resize "
       "transition reassign convert_to migrate upgrade downgrade reschedule rebook "
       "close finish complete resolve_ticket accept decline reject deny confirm "
       "stop pause resume restart reboot shutdown sleep disconnect unsubscribe unfollow "
       "unlike unstar unpin unassign detach untag leave archive unarchive hide mute", _D)
_verbs("delete remove drop destroy erase purge wipe truncate clear empty discard trash "
       "cancel terminate kill abort void expunge shred uninstall deprovision", _D, _C, (),
       False)
_verbs("revoke ban block kick suspend deactivate disable deny_access blacklist blocklist "
       "demote expel lock unlock unblock unban", _D, _C, ("permissions",))
_verbs("login logout authenticate sign signin signout", _D, _C, ("credentials",))

#: Words that are both a noun and a verb (``lock``, ``post``, ``email``): they count
#: as the call's verb only when no other verb is in the name (``SmartLockUnlockDoor``
#: unlocks; ``email_user`` e-mails; ``get_email`` reads).
AMBIGUOUS = frozenset(
    "lock post book order message mail email text call note log record page share alert "
    "tweet comment reply print tag label pin star like file report test return open view "
    "check list count watch trade transfer charge bill invoice deposit request sort plan "
    "draft review vote rate store load set stat info head tail track close "
    "match update schedule change".split()
)

#: HTTP methods (RFC 9110 section 9.2): safe methods read, PUT/DELETE are idempotent.
HTTP_METHODS: dict[str, tuple[str, bool]] = {
    "get": (_R, True),
    "head": (_R, True),
    "options": (_R, True),
    "trace": (_R, True),
    "post": (_A, False),
    "put": (_D, True),
    "patch": (_D, False),
    "delete": (_D, True),
}

#: noun -> (touches, reach): what a tool whose name or description mentions it handles.
NOUNS: dict[str, tuple[tuple[str, ...], str]] = {}


def _nouns(words: str, touches: tuple[str, ...], reach: str = _C) -> None:
    for w in words.split():
        NOUNS[w] = (touches, reach)


_nouns("money payment transaction fund wallet balance bank iban bic swift account_number "
       "card credit debit invoice bill loan mortgage stock share_price crypto bitcoin btc eth "
       "coin token_amount currency cash check cheque payout salary price fee transfer "
       "withdrawal deposit refund order purchase subscription budget expense tax", ("money",))
_nouns("password passwd passcode passphrase secret credential key apikey api_key token otp "
       "mfa 2fa pin ssh certificate cert keychain vault login", ("credentials",))
_nouns("permission role access acl policy privilege admin owner member membership group "
       "team door lock gate garage alarm firewall rule scope grant invitation sharing "
       "visibility", ("permissions",))
_nouns("email mail message inbox dm chat sms text notification comment tweet post reply "
       "thread channel conversation voicemail fax letter newsletter", ("messages",), _M)
_nouns("file folder directory dir document doc drive disk path attachment repo repository "
       "blob bucket object storage photo image video upload download backup archive",
       ("files",))
_nouns("command cmd shell script code terminal bash python sql program process job "
       "workflow pipeline container function lambda macro", ("code",))
_nouns("url uri link webpage web website page site http https endpoint webhook domain "
       "host browser internet", (), _E)

#: Parameter-name words (JSON schema property names, argument names) -> (touches, reach).
PARAMETERS: dict[str, tuple[tuple[str, ...], str]] = {}


def _params(words: str, touches: tuple[str, ...], reach: str = _C) -> None:
    for w in words.split():
        PARAMETERS[w] = (touches, reach)


_params("amount price sum total cost fee iban bic swift routing currency wallet payee "
        "card_number account_number quantity_usd", ("money",))
_params("recipient recipients to cc bcc phone phone_number email_address receiver "
        "addressee", ("messages",), _M)
_params("url uri link href endpoint webhook website hostname", (), _E)
_params("password passwd passcode secret token api_key apikey credential pin otp "
        "private_key", ("credentials",))
_params("path filepath file_path filename file_name directory folder dir", ("files",))
_params("command cmd script code shell expression sql program", ("code",))
_params("role permission permissions access access_level privilege acl scope",
        ("permissions",))

#: Argument names whose value names the operation a multi-purpose tool performs.
ACTION_ARGUMENTS = frozenset(
    "action operation op mode verb command_type method http_method request_method "
    "intent task_type".split()
)
#: Argument names that hold a network address.
URL_ARGUMENT = re.compile(
    r"(^|[_/])(url|uri|link|href|host|hostname|domain|endpoint|website|webhook)s?$", re.IGNORECASE
)
#: Values that are a network address: a scheme, ``www.``, or host.tld[/path].
URL_VALUE = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://\S+|www\.\S+|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}(?::\d+)?/\S*)$",
    re.IGNORECASE,
)

#: Argument-name words that choose *whom or what* a call acts on (another party, an
#: address, an account) rather than carry content: a write with none of them acts on
#: the principal's own records.
ADDRESSING_PARAMETERS = frozenset(
    "recipient recipients to cc bcc email phone url uri link href endpoint webhook host domain "
    "iban account user username member owner assignee target destination channel group "
    "contact receiver payee id".split()
)

#: Action-like arguments whose value is an HTTP method (``method="DELETE"``).
METHOD_ARGUMENTS = frozenset("method http_method request_method verb".split())

#: JSON-schema string formats (JSON Schema 2020-12 section 7.3) -> (touches, reach).
FORMATS: dict[str, tuple[tuple[str, ...], str]] = {
    "uri": ((), _E),
    "url": ((), _E),
    "iri": ((), _E),
    "uri-reference": ((), _E),
    "email": (("messages",), _M),
    "idn-email": (("messages",), _M),
    "password": (("credentials",), _C),
}

#: Nouns that, with no verb in the name, say the tool reports something (``WeatherForecast``).
READ_NOUNS = frozenset(
    "status info information details detail forecast weather quote quotes price prices "
    "history report summary balance count stats statistics metrics availability "
    "profile schema definition overview lookup search results result time date "
    "location directions distance rate rates exchange news headlines score".split()
)

#: Words of a description that say a write is irreversible or destructive.
IRREVERSIBLE_WORDS = frozenset("permanently irreversibly irreversible cannot undone".split())
