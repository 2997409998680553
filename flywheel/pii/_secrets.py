"""Secrets in text: provider key formats, credentials by name, headers, entropy.

Choice: ``detect-secrets`` (Yelp, maintained, used in pre-commit hooks) for
the provider formats it knows (AWS, GitHub, GitLab, Slack, Stripe, SendGrid,
Twilio, npm, PyPI, JWT, Azure storage keys, Artifactory, Discord, Mailchimp,
Square, Telegram, IBM, basic-auth URLs): its deny-list regexes are run with
``finditer`` because its own scanner reports strings without offsets. Its
entropy plugins score whole lines of code, which suits files, not a 20-character
token in a sentence, so the entropy rule here is local (a mixed-case token
with digits and high per-character entropy). Added on top, each from a
published format or standard: PEM private-key blocks (RFC 7468), current
OpenAI/Anthropic/Google/Hugging Face/DigitalOcean key prefixes (their documentation),
``Authorization`` and ``Cookie``/``Set-Cookie`` header values (RFC 9110,
RFC 6265), ``name=value`` / ``name: value`` assignments whose name is a
credential name (``flywheel.pii._keys``; .env, TOML, YAML, query strings,
ADO connection strings), command-line ``--password VALUE`` flags, and
passwords stated in prose in seven languages.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import Any

from flywheel.pii._decode import decode_base64
from flywheel.pii._gate import (
    Gate,
    any_gate,
    gated,
    literal_gate,
    literals,
    prefix_trees,
    trie_pattern,
)
from flywheel.pii._keys import key_label
from flywheel.pii._types import Detection

# -- detect-secrets' provider patterns ------------------------------------------------
_SKIP_PLUGINS = {"IPPublicDetector", "KeywordDetector"}  # IPs are PII here; keywords below


@lru_cache(maxsize=1)
def _provider_regexes() -> tuple[tuple[str, re.Pattern[str], Gate], ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    out = []
    for cls in get_mapping_from_secret_type_to_class().values():
        if not issubclass(cls, RegexBasedDetector) or cls.__name__ in _SKIP_PLUGINS:
            continue
        for rx in cls().denylist:
            out.append((cls.__name__, rx, literal_gate(rx)))
    return tuple(out)


@lru_cache(maxsize=1)
def _any_provider() -> tuple[Gate, frozenset[int]]:
    """The provider formats' gates as one, and where the formats with no gate are.

    ``any_gate``: most texts hold none of the literals; a format with no gate always runs.
    """
    regexes = _provider_regexes()
    ungated = frozenset(i for i, (_, rx, _) in enumerate(regexes) if not gated(rx))
    return any_gate([rx for _, rx, _ in regexes]), ungated


_EXTRA_FORMATS = re.compile(
    r"""(?x)
      -----BEGIN\ [A-Z0-9 ]*PRIVATE\ KEY(?:\ BLOCK)?-----[\s\S]*?-----END\ [A-Z0-9 ]*PRIVATE\ KEY(?:\ BLOCK)?-----
    | \bsk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_\-]{20,}
    | \bsk-(?:proj|svcacct|admin|live|test)-[A-Za-z0-9_\-]{20,}
    | \bsk-[A-Za-z0-9]{32,}\b
    | \bAIza[0-9A-Za-z_\-]{35}
    | \bhf_[A-Za-z0-9]{30,}
    | \bgithub_pat_[A-Za-z0-9_]{22,}
    | \b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{16,}
    | \b(?!pk_)[a-z]{2,8}_(?:live|test)_[A-Za-z0-9]{14,}
    | https://[A-Za-z0-9\-]+\.webhook\.office\.com/webhookb2/[^\s"'<>]+
    | https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+
    | https://hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]+/?
    | \bglpat-[A-Za-z0-9_\-]{20,}
    | \bdo[opr]_v1_[a-f0-9]{64,}\b
    | \bxox[abposr]-[A-Za-z0-9\-]{10,}
    | \bnpm_[A-Za-z0-9]{36}
    | \bpypi-[A-Za-z0-9_\-]{50,}
    | \bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}
    | \beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-+/=]*
    | (?<=\boauth:)[a-z0-9]{30}\b
    """
)

# -- by name ------------------------------------------------------------------------
_HEADER = re.compile(
    r"(?im)^[ \t]*(?:proxy-)?authorization[ \t]*:[ \t]*(?:(?:bearer|basic|token|digest|negotiate)[ \t]+)?(?P<v>[^\r\n]+)"
)
_COOKIE_HEADER = re.compile(r"(?im)(?:^|[\r\n]|\b)(?:set-)?cookie[ \t]*:[ \t]*(?P<v>[^\r\n]+)")
_SCHEME = re.compile(r"(?i)^(?:bearer|basic|token|digest|negotiate)\s+")
#: An HTTP credential (RFC 7617 Basic, RFC 6750 Bearer) in any value, not only under an
#: ``Authorization`` header line: a token with a digit, ``=`` padding or mixed case.
_SCHEME_VALUE = re.compile(
    r"(?i)\b(?:basic|bearer)[ ]+(?P<v>(?-i:(?=[A-Za-z0-9+/_\-.~]*(?:\d|=|[a-z][A-Z]|[A-Z][a-z]))[A-Za-z0-9+/_\-.~]{12,}={0,2}))"
)
_COOKIE_PAIR = re.compile(r"(?P<k>[^=;,\s]+)=(?P<v>[^;,\s]*)")
_COOKIE_ATTRS = {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority"}
_ASSIGN = re.compile(
    r"""(?P<k>[A-Za-z_][\w.\-]{0,60}?)["']?[ \t]*(?:=|:|\s=>)[ \t]*["']?(?P<v>[^\s"'`,;&<>]{4,})"""
)
_URL_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^/\s:@]{1,64}:(?P<v>[^@\s/]{1,128})@")
#: A URL whose user part is key material and has no password (a DSN's public key,
#: ``https://<32 hex>@o123.ingest.example/42``; a token as the user of a Git remote).
_URL_KEY_USER = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<v>[A-Za-z0-9_\-]{16,128})@[A-Za-z0-9]")
_FLAG = re.compile(
    r"(?i)--(?:password|passwd|pass|token|api-?key|secret|auth-token|access-token)[= ]+[\"']?(?P<v>[^\s\"']{3,})"
)
#: Password words of more languages (Nordic, Finnish, Baltic, Slavic, Hungarian, Turkish,
#: Romanian, Catalan, Galician, Basque, Greek, Indonesian/Malay, Albanian, Celtic, Swahili,
#: Vietnamese, Portuguese of Portugal...), written as a stem: an inflected form may follow
#: (``passordet``, ``hesla``, ``jelszavát``, ``parolă``, ``adgangskoden``).
_MORE_PASSWORD_WORDS = (
    r"lösenord|losenord|passord|adgangskode|kodeord|lykilorð|salasana|salasõna|parool|"
    r"parole|slaptažod|slaptazod|hasł|hasl|hesl|gesl|lozink|šifr|jelsz|şifre|sifre|"
    r"parol|palavra-passe|contrasenya|contrasinal|pasahitz|wagwoord|kennwort|"
    r"κωδικ|συνθηματικ|kodikos|kata[ ]sandi|kata[ ]laluan|sandi|fjalëkalim|fjalekalim|"
    r"cyfrinair|pasfhocal|nenosiri|mật[ ]khẩu|mat[ ]khau|wifi-?passwor[dt]|wlan-?passwort"
)
_INFLECTED = r"[^\W\d_]{0,5}"
#: Prepositions that say where a password is kept ("le mot de passe est dans le coffre",
#: "the password is with the caretaker", "das Passwort ist unter der Tastatur"): no value.
_PLACE_WORDS = frozenset(
    "with inside under behind within dans sous chez avec derrière unter hinter neben "
    "bei dentro debajo detrás sotto dietro presso onder achter".split()
)
#: An access code that logs in to an account ("code d'accès à l'espace adhérent",
#: "Zugangscode", "código de acceso"): a password when its value is shaped like one (the
#: shape rule of ``_PROSE_NEAR``); a door's access code of digits stays, as gate codes do.
_ACCESS_CODE = (  # plain words, no classes: the literal gate reads them
    r"access\ code|code\ d'accès|code\ d’accès|code\ d'acces|code\ d’acces|zugangscode|"
    r"código\ de\ acceso|codigo\ de\ acceso|código\ de\ acesso|codigo\ de\ acesso|"
    r"codice\ d'accesso|codice\ d’accesso|codice\ di\ accesso|toegangscode"
)
_PROSE = re.compile(
    rf"""(?ix)
    (?<![^\W\d_])(?:password|passwort|kennwort|mot\ de\ passe|mdp|contraseña|contrasena|clave|senha|wachtwoord|
         passcode|passphrase|pin|(?:{_MORE_PASSWORD_WORDS}){_INFLECTED})(?![^\W\d_])
    [^\n:=]{{0,30}}?
    (?:[:=]|\bis\b|\bwas\b|\best\b|\bes\b|\bist\b|\blautet\b|\bè\b|\bé\b|\bera\b|
       \bär\b|\ber\b|\bon\b|\bto\b|\bjest\b|\bje\b|\baz\b|\bdır\b|\bdir\b|\be\b)
    \s*["'«“]?\s*(?P<v>[^\s"'»”]{{4,64}})
    """
)
#: The password word right before a value with a letter and a digit or symbol, no verb:
#: "con clave Caracol22", "mit Passwort Sommer2024!", "with password Tr0mb0ne".
_PROSE_BARE = re.compile(
    rf"""(?ix)
    (?<![^\W\d_])(?:password|passwort|kennwort|mot\ de\ passe|contraseña|contrasena|clave|senha|wachtwoord|
         passcode|passphrase|(?:{_MORE_PASSWORD_WORDS}){_INFLECTED})(?![^\W\d_])[ \t]+["'«“]?
    (?P<v>(?=[^\s"'»”]*[a-z])(?=[^\s"'»”]*[0-9!#$%&*+?@^~])[^\s"'»”]{{6,64}})
    """
)
#: The password word, a few words in any language ("la contrasenya és", "parola este",
#: "s Passwort für s Kundeportal isch"), then the first password-shaped word: a lower-case
#: letter and a digit or symbol, no URL or mailbox. Verbs differ by language; the shape of
#: a password does not.
_PROSE_NEAR = re.compile(
    rf"""(?ix)
    (?<![^\W\d_])(?:password|passwort|mot\ de\ passe|contraseña|contrasena|clave|senha|wachtwoord|
         passcode|passphrase|(?:{_MORE_PASSWORD_WORDS}){_INFLECTED}|mdp|{_ACCESS_CODE})(?![^\W\d_])
    (?P<gap>[^\n.!?;]{{0,48}}?)[ \t:=]["'«“]?
    (?P<v>(?-i:(?=[^\s"'»”]*[a-zß-ÿ])(?=[^\s"'»”]*[0-9!#$%&*+?^~])[^\s"'»”]{{6,64}}))
    """
)
#: A password word as the head of a compound ("Certifikatlösenordet", "Routerpasswort",
#: "WLAN-Kennwort" is a word start already): the Germanic and Nordic words, then the first
#: password-shaped word as above.
_PROSE_COMPOUND = re.compile(
    r"""(?x)
    (?<![^\W\d_])[^\W\d_]{3,30}?(?-i:lösenord|losenord|passwort|kennwort|wachtwoord|passord|
        adgangskode|salasana|wagwoord)[^\W\d_]{0,5}(?![^\W\d_])
    (?P<gap>[^\n.!?;]{0,48}?)[ \t:=]["'«“]?
    (?P<v>(?=[^\s"'»”]*[a-zß-ÿ])(?=[^\s"'»”]*[0-9!#$%&*+?^~])[^\s"'»”]{6,64})
    """
)
_COMPOUND_HEADS = (
    "lösenord", "losenord", "passwort", "kennwort", "wachtwoord", "passord", "adgangskode",
    "salasana", "wagwoord",
)  # fmt: skip
#: A code that disarms a security system or opens a safe: an alarm, safe, key-box or
#: lock-box code in many languages ("alarm code", "Alarmcode", "código de la alarma",
#: "alarmako kodea", "kod do sejfu", "Tresorcode"; the guard, a few words of the same sentence,
#: then the code word: "the key is in the lockbox by the door, code ..."), then a code of three
#: digits or more (a
#: keypad's letters A-D, ``#`` and ``*`` too), in up to three groups; a date is no such code.
#: A door or gate code stays: it is handed to couriers and guests with the address.
_GUARDS = (
    r"alarm|alarme|alarma|allarme|alarmu|larm|larwm|hälytys|halytys|riaszt|alarmă|"
    r"safe|tresor|coffre|coffre-fort|caja[ ]fuerte|cassaforte|cofre|kluis|kassaskåp|"
    r"kassaskap|pengeskab|sejf|sejfu|széf|szef|kasa|kassakaappi|trezor|"
    r"keybox|key[ ]box|lockbox|lock[ ]box|key[ ]safe|schlüsselsafe|schlüsselkasten|"
    r"boîte[ ]à[ ]clés|sleutelkluis|nyckelskåp|nøkkelboks|nøglebox"
)
_CODES = r"code|codes|kode|kod|koodi|código|codigo|codice|cod|kód|kodu|kodas|kods|kodi|cód"
_OPENING_CODE = re.compile(
    rf"""(?ix)
    (?<![^\W\d_])(?:
        (?:{_GUARDS})[^\W\d_]{{0,6}}[ \-]?(?:{_CODES})[^\W\d_]{{0,3}}
      | (?:{_CODES})[^\W\d_]{{0,3}}(?:[ ](?:d['’]|de|del|de[ ]la|da|do|dla|för|til|for|of|the|to|
            für|der|des|du|la|el|di|dell['’]|della|dem|den|zum|zur|al|au|on|in)){{0,2}}
            [ ]?(?:{_GUARDS})[^\W\d_]{{0,6}}
      | (?:{_GUARDS})[^\W\d_]{{0,6}}(?![^\W\d_])[^\n\d.;!?]{{1,40}}?(?<![^\W\d_])(?:{_CODES})[^\W\d_]{{0,3}}
    )(?![^\W\d_])[^\n\d]{{0,24}}?
    (?P<v>(?<![\w\-])(?=(?:[ \-]?[A-D#*]?\d){{3}})[0-9A-D#*]{{2,10}}(?:[ \-][0-9#*]{{2,6}}){{0,2}})
    (?![\w]|[.,:/\-]\d)
    """
)
_DATE_VALUE = re.compile(r"\A(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})\Z")
#: A login written as a pair after a credentials word ("credentials: admin / Tr0mb0ne!",
#: "Zugangsdaten: mmeier / Herbst#24", "identifiants : jdupont:Soleil2024"): the second
#: member is the password when it is shaped like one (``_password_shaped``).
_CREDENTIAL_WORDS = (
    r"credentials?|creds|login|log-in|logins|identifiants?|zugangsdaten|anmeldedaten|logindaten|"
    r"credenciales|credenziali|inloggegevens|credenciais|datos[ ]de[ ]acceso|dados[ ]de[ ]acesso"
)
_CREDENTIAL_PAIR = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_CREDENTIAL_WORDS})(?![^\W\d_])[ \t]*[:=\-]?[ \t]*"
    r"(?P<u>[^\s/:,;]{1,64})[ \t]*[/:][ \t]*(?P<v>[^\s\"'/]{4,64})"
)

#: The short password words: "pw: Hunter2!x", "pwd=...", "pass: ..." or "pass is ..." (a
#: bus or boarding pass has no password-shaped value), and "user jdoe pass Tr0ub4dor".
_PASS_SHORT = re.compile(
    r"(?i)(?<![^\W\d_])"
    r"(?:(?P<user>user(?:name)?|login|usuario|utilisateur|benutzer|utente|gebruiker)"
    r"[ \t:=]+[^\s,;/]{1,64}[ \t]*[,;/]?[ \t]*(?:pass|pw|pwd|passwd)(?![^\W\d_])[ \t:=]+"
    r"|(?:pass|pw|pwd|passwd)(?:[ \t]*[:=]|[ ]is)[ \t]*)[\"'«“]?(?P<v>[^\s\"'»”]{4,64})"
)
#: A personal identification number without a verb: "PIN code 4821", "PIN-Code 0815",
#: "code PIN 4821" (in capitals: a pin of a connector or a chip is "pin 12"), and a German
#: online-banking transaction number ("TAN 482913", "mTAN", "pushTAN").
_PIN_CODE = re.compile(
    r"(?<![^\W\d_])(?:PIN(?:[ \-]?(?:[Cc]ode|[Nn]ummer|[Nn]umber|[Nn]o\.?))?|[Cc]ode[ ]PIN|"
    r"[Cc]ódigo[ ]PIN|[Cc]odice[ ]PIN|(?:m|sms|push|chip|i)?TAN)"
    r"[ \t:]+(?P<v>\d{4,8})(?![\d.,/\-]\d)(?!\w)"
)
#: One-time codes (HOTP/TOTP, RFC 4226/6238; SMS and e-mail verification codes, the German
#: banking TAN) and card security codes (CVV/CVC, PCI DSS sensitive authentication data): the
#: code word, a few words of the same sentence, then the code of digits (or digits in two
#: groups: "482 913"). A booking's confirmation code is a reference, not one of these.
_ONE_TIME_WORDS = (
    r"one-time code|one time code|onetime code|one-time password|one time password|"
    r"one-time passcode|one-time pin|otp|totp|2fa code|mfa code|"
    r"verification code|security code|authentication code|login code|"
    r"sign-in code|sign in code|signin code|"
    r"code de (?:vérification|verification|sécurité|securite|connexion)|"
    r"code à usage unique|"
    r"bestätigungscode|bestaetigungscode|verifizierungscode|sicherheitscode|einmalpasswort|"
    r"einmalcode|anmeldecode|"
    r"código de (?:verificación|verificacion|seguridad|un solo uso|acceso único|"
    r"verificação|segurança)|"
    r"codigo de (?:verificacion|seguridad|verificacao|seguranca)|"
    r"codice (?:di verifica|di sicurezza|otp|monouso)|verificatiecode|beveiligingscode|"
    r"eenmalige code|cvv2?|cvc2?|cvn|card verification (?:value|code)|"
    r"cryptogramme(?: visuel)?|"
    r"kartenprüfnummer|kartenpruefnummer"
)
_ONE_TIME_CODE = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_ONE_TIME_WORDS})(?![^\W\d_])"
    # glue only between the word and the code: "is", ":", "lautet", "for your login"
    r"(?:[ \t]*(?:[:=#]|is|was|ist|lautet|est|es|è|é|era|le|el|il|"
    r"(?:for|für|pour|para|per|voor|of|de|del|der|des|della|do|da)"
    r"(?:[ ](?:your|the|ihre?n?|votre|la|le|tu|su|il|je|uw))?[ ][^\W\d_]+)){0,3}[ \t]*"
    r"(?P<v>(?<![\w\-])(?:\d{3,4}[ \-]\d{3,4}|\d{3,8})(?![\w]|[.,:/\-]\d))"
)

#: Account recovery and backup codes (two-factor backup codes, recovery keys): each code of
#: the list after the word is a credential.
_RECOVERY_WORDS = re.compile(
    r"(?i)(?<![^\W\d_])(?:(?:recovery|backup|scratch|emergency)[ \-]?(?:codes?|keys?)|"
    r"wiederherstellungs(?:code|schlüssel|schluessel)s?|backup-?codes?|notfallcodes?|"
    r"codes?[ ]de[ ](?:récupération|recuperation|secours)|"
    r"códigos?[ ]de[ ](?:recuperación|recuperacion|respaldo|recuperação|recuperacao|backup)|"
    r"codici[ ]di[ ](?:recupero|backup|emergenza)|herstelcodes?|herstelsleutel)(?![^\W\d_])"
)

_RECOVERY_CODE = re.compile(
    r"(?<![\w\-])(?=[A-Za-z0-9\-]*\d)[A-Za-z0-9]{3,10}(?:-[A-Za-z0-9]{3,10}){0,7}(?![\w\-])"
)
#: A Wi-Fi network's key (WPA2/WPA3 pre-shared key: a passphrase of 8 to 63 characters,
#: IEEE 802.11i): a Wi-Fi word, a few words, a key word, then a password-shaped value.
_WIFI_KEY = re.compile(
    r"(?i)(?<![^\W\d_])(?:wi-?fi|wlan|wpa[23]?|psk)(?![^\W\d_])[^\n.;!?]{0,40}?"
    r"(?<![^\W\d_])"
    r"(?:key|schlüssel|schluessel|clé|cle|clef|clave|chiave|sleutel|psk|code|passphrase)"
    r"(?![^\W\d_])[ \t]*[:=]?[ \t]*[\"'«“]?(?P<v>[^\s\"'»”]{8,63})"
)

#: Command-line passwords as the tools document them: MySQL/MariaDB clients' ``-pPASSWORD``
#: (no space), ``sshpass -p PASSWORD``, ``redis-cli -a PASSWORD``.
_CLI_PASSWORD = re.compile(
    r"(?:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?"
    r"[ ]-p(?P<a>[^\s\"'\-][^\s\"']{2,})"
    r"|\bsshpass[ ]+-p[ ]*[\"']?(?P<b>[^\s\"']{3,})"
    r"|\bredis-cli\b[^\n|;&]*?[ ]-a[ ]+[\"']?(?P<c>[^\s\"']{3,}))"
)
#: Words right after a password word that say the text is about the password, not the
#: password: a hint, a policy, a manager ("password hint: ...", "Passwort vergessen?"); a
#: product's name after more words is whose password it is ("palavra-passe do X Manager é").
_PASSWORD_WORD_AT = re.compile(r"(?i)mot de passe|[^\W\d_]+(?:[\-'’][^\W\d_]+)*")
_ABOUT_PASSWORD = re.compile(
    r"(?i)[ \t\-]*(?:hint|hints|policy|policies|rules?|requirements?|expir\w*|length|"
    r"strength|manager|forgotten|forgot|vergessen|richtlinie|oublié|oublie|"
    r"olvidad[oa]|olvidé|dimenticat[oa]|vergeten|esquec\w*|indice|pista|suggerimento)(?![^\W\d_])"
)


def _word_gates() -> tuple[re.Pattern[str], dict[str, tuple[str, ...]]]:
    """One scan of the lower-cased text for the literals of the word-led rules above.

    Login pairs, short password words, one-time and recovery codes, Wi-Fi keys, command
    lines: the literals each rule's matches hold, so a text holding none skips the rule.
    """
    rules: dict[str, tuple[str, ...]] = {
        "pair": literals(re.compile(_CREDENTIAL_WORDS, re.I)) or (),
        "short": ("pw", "pass"),
        "once": literals(re.compile(_ONE_TIME_WORDS, re.I)) or (),
        "recovery": literals(_RECOVERY_WORDS) or (),
        "wifi": ("wifi", "wi-fi", "wlan", "wpa", "psk"),
        "cli": ("mysql", "mariadb", "sshpass", "redis-cli"),
    }
    if not all(rules.values()):
        raise RuntimeError("a word-led secret rule has no literal gate")  # caught by the tests
    by_literal: dict[str, list[str]] = {}
    for rule, lits in rules.items():
        for lit in lits:
            by_literal.setdefault(lit.lower(), []).append(rule)
    return re.compile(trie_pattern(set(by_literal))), {k: tuple(v) for k, v in by_literal.items()}


_WORD_GATE, _WORD_RULES = _word_gates()


def _about_password(text: str, start: int) -> bool:
    """Whether the password word at ``start`` is followed by a word about the password."""
    w = _PASSWORD_WORD_AT.match(text, start)
    return w is not None and _ABOUT_PASSWORD.match(text, w.end()) is not None


def _password_shaped(v: str) -> bool:
    """A lower-case letter and a digit or symbol inside the value.

    A sentence's last "?" or "!" is none; a code in capitals ("LH2024") is a reference.
    """
    core = v.rstrip(_TRAILING)
    return any(c.islower() for c in core) and any(
        c.isdigit() or c in "!#$%&*+?@^~" for c in core
    )
#: Every word of ``_CODES`` holds one of these (lower case): a substring test per text.
_CODE_LITERALS = ("cod", "kod", "kood", "kód", "cód")
#: No password: a URL, a mailbox, a date, a host or slug in lower case ("vpn-gw-01").
_NOT_A_PASSWORD = re.compile(
    r"://|\A//|@[\w\-]+\.\w|\A\d{1,4}[./\-]\d|\A[a-z0-9]+(?:[\-_.][a-z0-9]+)+[.,:]?\Z"
)
#: curl's ``-u USER:PASSWORD`` / ``--user USER:PASSWORD`` (basic authentication).
_CURL_USER = re.compile(r"""(?:^|\s)(?:-u|--user)[ =]["']?[^\s:"']+:(?P<v>[^\s"']{3,})""")
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\*+|x{3,}|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|%\([^)]*\)s|null|none|true|false|"
    r"redacted|undefined|n/?a|hidden|secret|password|changeme|example|basic|bearer|digest|negotiate|"
    r"\.{3,})$"
)
_TRAILING = ".,;:)]}!?"
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-+/.~]{18,}[A-Za-z0-9]={0,2}")
# Every provider format and random token has a run this long: a cheap gate before ~30 regexes.
_LONG_RUN = re.compile(r"[A-Za-z0-9_\-+/=.]{16,}")
_HEX = re.compile(r"^(?:[0-9a-f]+|[0-9A-F]+)$")
#: A short lower-case type word and an underscore or hyphen before an id (Stripe-style
#: ``evt_``, ``cus_``, ``req_``; ``run-``, ``ws-`` of Terraform Cloud): providers' secret
#: prefixes are matched by their own patterns.
_OBJECT_ID = re.compile(r"^[a-z]{2,6}[_\-]([A-Za-z0-9]+)$")
#: Object-type prefixes of payment providers' public object ids (Stripe's API reference: charges,
#: payment intents and methods, customers, invoices, subscriptions, products, prices, events,
#: refunds, balance transactions, payouts, accounts, sources, setup intents, checkout sessions,
#: disputes, transfers): references printed on receipts and in dashboards, no credential.
_PUBLIC_OBJECT_TYPES = frozenset(
    "ch py pi pm cus in ii sub si prod price evt re txn po acct src seti cs dp tr ba card tok".split()
)


def public_object_id(value: str) -> bool:
    """A payment provider's public object id (``ch_3PqL8x2eZvKYlo2C1a9F``, a card token
    ``tok_1QxR8f...``): a reference printed on receipts and passed to servers, no credential,
    whatever key it sits under. A client secret (``pi_..._secret_...``) is none of these."""
    m = _OBJECT_ID.match(value.strip())
    if m is None or "_" not in m.group(0) or m.group(0).split("_", 1)[0] not in _PUBLIC_OBJECT_TYPES:
        return False
    body = m.group(1)  # base62, 14 to 30 characters: not a word and a year ("in_Summer2024")
    return 14 <= len(body) <= 30 and all(
        any(f(c) for c in body) for f in (str.isdigit, str.isupper, str.islower)
    )
#: A path segment that is no random string: digits, a lower-case word, a code in capitals and
#: digits, or a capitalised word.
_WORDISH = re.compile(r"\A(?:\d+|[a-z]+\d*|[A-Z0-9]+|[A-Z][a-z]+\d*)\Z")
#: A segment of a URL path that is a word: a resource or action name ("payments", "replay",
#: "purge_cache"), an API version ("v2").
_PATH_WORD = re.compile(r"\A(?:[a-z]{3,}(?:[_\-][a-z]+)*|v\d{1,2})\Z")
_EXTRA_GATE = literal_gate(_EXTRA_FORMATS)
_PROSE_GATE = literal_gate(_PROSE)
_NEAR_GATE = literal_gate(_PROSE_NEAR)


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _value_ok(v: str, shortest: int = 4) -> bool:
    return len(v) >= shortest and not _PLACEHOLDER.match(v)


def looks_random(token: str) -> bool:
    """A generated credential: 20+ chars, upper, lower and digits, high entropy, not hex.

    Hashes and ids (hex, UUIDs, all-lower or all-upper ids) are left alone:
    they are look-alikes, not secrets.
    """
    core = token.strip("=")
    prefixed = _OBJECT_ID.match(core)
    if prefixed:  # "evt_3QxT8v2Kp9Zr4Wy7", "req_01JC9ZK4...": a typed object id; judge its body
        core = prefixed.group(1)
        kind = re.split(r"[_\-]", prefixed.group(0), maxsplit=1)[0]
        if kind in _PUBLIC_OBJECT_TYPES and len(core) <= 30:
            return False  # "ch_3PqL8x2eZvKYlo2C1a9F": a charge's id, a public reference
    if "/" in core and all(_WORDISH.match(p) for p in re.split(r"[/\-_]", core) if p):
        return False  # "2026/wk31/contract-LGS40": a path of words, numbers and codes
    if "/" in core:
        parts = [p for p in core.split("/") if p]
        if any(_PATH_WORD.match(p) for p in parts):
            # "com/v2/payments/tr_WDqYK6vllg/replay": a URL path, generated only where one
            # of its segments is on its own (a token in a path still is)
            return any(looks_random(p) for p in parts if not _PATH_WORD.match(p))
    if len(core) < 20 or _HEX.match(core):
        return False
    if not (any(c.isupper() for c in core) and any(c.islower() for c in core)):
        # One case only: a long token of letters past a-f and digits is still generated
        # (key-3ax6xnjp29jd6fds4gc373sgvjxteol0); shorter ones are ids and words.
        # Only pieces mixing letters and digits count: "trial-fab7eabc...", a word before a
        # hex id, is an identifier.
        mixed = "".join(p for p in re.split(r"[-_.]", core) if any(c.isdigit() for c in p))
        return (
            (len(mixed) >= 32 or (len(mixed) >= 28 and _entropy(mixed) >= 4.3))
            and not _HEX.match(mixed)
            and sum(c.isdigit() for c in mixed) >= 4
            and sum(c.isalpha() and c.lower() > "f" for c in mixed) >= 4
            and _entropy(mixed) >= 4.0
        )
    if sum(c.isdigit() for c in core) < 2:
        return False
    return _entropy(core) >= 3.8


#: Key material with a provider's prefix in capitals ("NRAK-2YDB0TPX1G03QAVK1L8UXLWCYGU").
_PREFIXED_KEY = re.compile(r"\A[A-Z]{2,8}[-_](?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{16,}\Z")
_UUID = re.compile(r"\A[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")
#: A software product or licence key: four to eight groups of 4-6 capitals and digits
#: ("7HK3M-9QXWT-4JRPB-2VYCD-8MGFX"), letters and digits mixed.
_GROUPED_KEY = re.compile(
    r"\A(?=(?:[A-Z0-9\-]*\d){3})(?=(?:[A-Z0-9\-]*[A-Z]){3})[A-Z0-9]{4,6}(?:-[A-Z0-9]{4,6}){3,7}\Z"
)


def credential_shaped(value: str) -> bool:
    """Generated key material, for a value under a key word (``licenseKey``, ``routing_key``):
    a random-looking token, 24+ hex digits (an integration or subscription key; a UUID is an
    id), or a capitalised provider prefix before 16+ random capitals and digits."""
    v = value.strip().strip("\"'")
    if not 16 <= len(v) <= 512 or any(c.isspace() for c in v) or _UUID.match(v):
        return False
    if looks_random(v) or _PREFIXED_KEY.match(v) or _GROUPED_KEY.match(v):
        return True
    return len(v) >= 24 and _HEX.match(v) is not None and sum(c.isdigit() for c in v) >= 4 and any(
        c.isalpha() for c in v
    )


#: A key word then the value after a space, as prose and runbooks write them
#: ("routing_key 5b1f2a5c...", "license key NRAK-..."): ``credential_shaped`` values only.
_VALUE_AFTER_WORD = re.compile(r"(?<=[\w\-][ \t])[A-Za-z0-9][A-Za-z0-9_\-+/=.~]{15,}")
_WORD_BEFORE = re.compile(r"(?:[A-Za-z][\w\-]{0,20}[ ])?[A-Za-z][\w\-]{0,40}\Z")
#: Public key material right before a token: a public key, an encryption recipient, a
#: fingerprint (WireGuard ``PublicKey = ...``, age ``recipients: ["age1..."]``, SSH/PGP).
_PUBLIC_BEFORE = re.compile(
    r"(?i)(?:public[ _\-]?key|pub[ _\-]?key|recipients?|fingerprint)"
    r"[\"']?[ \t]*[:=][ \t]*[\"'\[ ]*\Z"
)
#: A public access token by its provider's documented prefix: Mapbox's ``pk.`` tokens are
#: made to be embedded in web pages (its secret and temporary tokens are ``sk.`` and ``tk.``).
_PUBLIC_TOKEN = re.compile(r"(?<![\w.\-])pk\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}")
_KEY_WORDS_GATE = re.compile(
    r"key|token|secret|schl|chiave|chave|sleutel|nøgle|nøkkel|nyckel|avain|klucz|kulcs|anahtar|cheie"
)
#: The word key (or secret, token) of many languages, then up to 32 characters of the same
#: sentence before a value ("klucz CRC ...", "API võti (LHV Connect): ...", "salainen avain
#: ..."). English "key" alone is no such word ("sort key", "issue key"): the key rules judge
#: it with the word before it (``_VALUE_AFTER_WORD``).
_KEY_NEAR = re.compile(
    r"(?i)(?<![^\W\d_])(?:schlüssel|schluessel|clé|clef|clave|llave|chiave|chave|sleutel|nøgle|"
    r"nogle|nøkkel|nokkel|nyckel|avain|klucz|kulcs|anahtar|cheie|klíč|klic|kľúč|ključ|kljuc|võti|"
    r"võtme|votme|atslēga|atslega|raktas|κλειδί|gakoa|giltza|allwedd|eochair|lykill|çelës|khóa|"
    r"kunci|ufunguo|secret|secreto|segreto|segredo|sekret|geheim|salainen|titkos|gizli|token|"
    r"jeton|api[ _\-]?key)[^\W\d_]{0,5}(?![^\W\d_])[^\n.;!?]{0,32}\Z"
)
_KEY_NEAR_GATE = literal_gate(_KEY_NEAR)
#: A value a key word a few words before makes a credential: generated key material
#: (``credential_shaped``) or 16 hex digits and more mixing digits and letters (a shared
#: secret or a CRC/HMAC key printed in hex).
_VALUE_NEAR = re.compile(r"(?<![\w\-+/=.~])[A-Za-z0-9][A-Za-z0-9_\-+/=.~]{15,}")
_SHORT_HEX = re.compile(r"\A(?=(?:[a-f]*\d){4})(?=(?:\d*[a-f]){4})[0-9a-f]{16,64}\Z|\A(?=(?:[A-F]*\d){4})(?=(?:\d*[A-F]){4})[0-9A-F]{16,64}\Z")


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return start, end


def _mdp_upper(m: re.Match[str]) -> bool:
    """The French "mdp" (mot de passe) is written in lower case; "MDP" is a Markov decision
    process or a product's name."""
    head = m.group()[:3]
    return head.lower() == "mdp" and head != "mdp"


def detect_secrets(text: str, *, skip: Any = None) -> list[Detection]:
    """Secret spans in ``text`` (overlaps not resolved).

    Args:
        text: Any text.
        skip: Optional predicate ``(start, end) -> bool``: spans it accepts are
            not reported by the entropy rule (the caller decoded them as content).
    """
    out: list[Detection] = []
    public = [m.span() for m in _PUBLIC_TOKEN.finditer(text)] if "pk.eyJ" in text else []

    def add(s: int, e: int, score: float, shortest: int = 4) -> None:
        s, e = _strip(text, s, e)
        if e - s >= shortest and _value_ok(text[s:e], shortest) and not text[s:e].startswith("<"):
            if not any(ps <= s and e <= pe for ps, pe in public):
                out.append(Detection(s, e, "SECRET", score, "secret"))

    if len(text) < 8:
        return out
    long_run = _LONG_RUN.search(text) is not None
    lower = text.lower()
    any_provider, ungated = _any_provider()
    some = long_run and any_provider(text, lower)  # else only the formats with no gate can pass
    for i, (_, rx, gate) in enumerate(_provider_regexes() if long_run else ()):
        if not ((some or i in ungated) and gate(text, lower)):
            continue
        for m in rx.finditer(text):
            g = m.lastindex and next((i for i in range(1, m.lastindex + 1) if m.group(i)), 0)
            add(m.start(g or 0), m.end(g or 0), 0.9)
    for m in _EXTRA_FORMATS.finditer(text) if long_run and _EXTRA_GATE(text, lower) else ():
        add(m.start(), m.end(), 0.95)
    if "authorization" in lower:
        for m in _HEADER.finditer(text):
            v = m.group("v")
            sm = _SCHEME.match(v)
            add(m.start("v") + (sm.end() if sm else 0), m.end("v"), 0.9)
    if "basic" in lower or "bearer" in lower:
        for m in _SCHEME_VALUE.finditer(text):
            add(m.start("v"), m.end("v"), 0.85)
    if "cookie" in lower:
        for m in _COOKIE_HEADER.finditer(text):
            base = m.start("v")
            for c in _COOKIE_PAIR.finditer(m.group("v")):
                if c.group("k").lower() not in _COOKIE_ATTRS and len(c.group("v")) >= 6:
                    add(base + c.start("v"), base + c.end("v"), 0.85)
    if "=" in text or ":" in text:
        for m in _ASSIGN.finditer(text):
            k = m.group("k").rsplit(".", 1)[-1]
            label = key_label(k)
            if label == "SECRET_IF_RANDOM":
                if credential_shaped(m.group("v")):
                    add(m.start("v"), m.end("v"), 0.75)
                continue
            if label == "SECRET" or (k.lower() == "auth" and len(m.group("v")) >= 16):
                # "auth" alone also names a card payment's short approval code ("A7Q2KX")
                add(m.start("v"), m.end("v"), 0.8)
        if "://" in text:
            for m in _URL_USERINFO.finditer(text):
                add(m.start("v"), m.end("v"), 0.9)
            for m in _URL_KEY_USER.finditer(text):
                if credential_shaped(m.group("v")) or _SHORT_HEX.match(m.group("v")):
                    add(m.start("v"), m.end("v"), 0.85)
    if long_run and _KEY_WORDS_GATE.search(lower):
        for m in _VALUE_AFTER_WORD.finditer(text):
            if not credential_shaped(m.group()):
                continue
            k = _WORD_BEFORE.search(text, max(0, m.start() - 64), m.start() - 1)
            words = k.group().split(" ") if k else []
            # the key word alone ("routing_key"), or with the word before it ("license key")
            named = (" ".join(words), words[-1]) if words else ()
            if any(key_label(w) in ("SECRET", "SECRET_IF_RANDOM") for w in named):
                add(m.start(), m.end(), 0.75)
    if long_run and _KEY_NEAR_GATE(text, lower):
        for m in _VALUE_NEAR.finditer(text):
            v = m.group().rstrip(_TRAILING)
            if (_SHORT_HEX.match(v) or credential_shaped(v)) and _KEY_NEAR.search(
                text, max(0, m.start() - 48), m.start()
            ):
                add(m.start(), m.start() + len(v), 0.7)
    if "--" in text:
        for m in _FLAG.finditer(text):
            add(m.start("v"), m.end("v"), 0.85)
    if _PROSE_GATE(text, lower):
        for rx in (_PROSE, _PROSE_BARE):
            for m in rx.finditer(text):
                v = m.group("v")
                # "...: https://...": a link; "the password is in the drawer": a place;
                # "password hint: ...", "Passwort vergessen?": about the password
                if (
                    not v.startswith("//")
                    and v.casefold() not in _PLACE_WORDS
                    and not _mdp_upper(m)
                    and not _about_password(text, m.start())
                    and (rx is _PROSE or _password_shaped(v))
                ):
                    add(m.start("v"), m.end("v"), 0.7)
    if _NEAR_GATE(text, lower):
        for m in _PROSE_NEAR.finditer(text):
            v = m.group("v")
            if not _NOT_A_PASSWORD.search(v) and not _mdp_upper(m) and _password_shaped(v) and not (
                _about_password(text, m.start())
            ):
                add(m.start("v"), m.end("v"), 0.65)
    if any(w in lower for w in _COMPOUND_HEADS):
        for m in _PROSE_COMPOUND.finditer(text):
            if not _NOT_A_PASSWORD.search(m.group("v")) and _password_shaped(m.group("v")):
                add(m.start("v"), m.end("v"), 0.65)
    gated = {r for m in _WORD_GATE.finditer(lower) for r in _WORD_RULES[m.group()]}
    if "pair" in gated and ("/" in text or ":" in text):
        for m in _CREDENTIAL_PAIR.finditer(text):
            v = m.group("v")
            if _password_shaped(v) and not _NOT_A_PASSWORD.search(v) and not _DATE_VALUE.match(v):
                add(m.start("v"), m.end("v"), 0.65)
    if "short" in gated:
        for m in _PASS_SHORT.finditer(text):
            v = m.group("v")
            if (m.group("user") or _password_shaped(v)) and not _NOT_A_PASSWORD.search(v):
                add(m.start("v"), m.end("v"), 0.65)
    if "PIN" in text or "TAN" in text:
        for m in _PIN_CODE.finditer(text):
            add(m.start("v"), m.end("v"), 0.7)
    if "once" in gated:
        for m in _ONE_TIME_CODE.finditer(text):
            if not _DATE_VALUE.match(m.group("v")):
                add(m.start("v"), m.end("v"), 0.7, shortest=3)  # a card's 3-digit CVV
    if "recovery" in gated:
        for m in _RECOVERY_WORDS.finditer(text):
            end = len(text)
            for stop in (".\n", "\n\n", ". "):
                k = text.find(stop, m.end())
                if k != -1:
                    end = min(end, k)
            for c in _RECOVERY_CODE.finditer(text, m.end(), min(end, m.end() + 240)):
                if len(c.group()) >= 6:
                    add(c.start(), c.end(), 0.7)
    if "wifi" in gated:
        for m in _WIFI_KEY.finditer(text):
            if _password_shaped(m.group("v")) and not _NOT_A_PASSWORD.search(m.group("v")):
                add(m.start("v"), m.end("v"), 0.65)
    if "cli" in gated:
        for m in _CLI_PASSWORD.finditer(text):
            g = next(k for k in ("a", "b", "c") if m.group(k))
            add(m.start(g), m.end(g), 0.85)
    if any(w in lower for w in _CODE_LITERALS):
        for m in _OPENING_CODE.finditer(text):
            if not _DATE_VALUE.match(m.group("v")):
                add(m.start("v"), m.end("v"), 0.7)
    if "-u" in text:
        for m in _CURL_USER.finditer(text):
            add(m.start("v"), m.end("v"), 0.85)
    for m in _TOKEN.finditer(text) if long_run else ():
        # Dotted runs (hosts, file names, versions) are judged piece by piece.
        pos = m.start()
        for piece in m.group().split("."):
            s, e = pos, pos + len(piece)
            pos = e + 1
            if (
                looks_random(piece)
                and decode_base64(piece) is None  # base64 of text is content, decoded elsewhere
                and not (skip and skip(s, e))
                and not _PUBLIC_BEFORE.search(text, max(0, m.start() - 40), m.start())
            ):
                add(s, e, 0.6)
    return out


# The patterns above, each alternation as a prefix tree: the same matches, faster (_gate).
prefix_trees(globals())
