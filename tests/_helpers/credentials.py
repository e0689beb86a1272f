"""Credential shapes as they turn up in transcripts, each with the secret in it and the kind
its label names. Every value is made up (the AWS pair is AWS's own documentation example)."""

from __future__ import annotations

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7yQ2fakefakefakeQ9\n"
    "aGVsbG8gd29ybGQgZmFrZSBrZXk=\n-----END RSA PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

# (kind, the text around it with {} where the secret goes, the secret)
CREDENTIALS: list[tuple[str, str, str]] = [
    ("aws-access-key", "the key {} is the build's", "AKIAIOSFODNN7EXAMPLE"),
    (
        "aws-secret-key",
        "export AWS_SECRET_ACCESS_KEY={}",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "aws-secret-key",
        'aws_secret_access_key = "{}"',
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    ),
    ("github-token", "git clone with {} works", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
    (
        "github-token",
        "GH_TOKEN set to {} today",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX0123",
    ),
    ("openai-key", "OpenAI key {} in .env", "sk-abcdefghij1234567890T3BlbkFJabcdefghij1234567890"),
    (
        "openai-key",
        "use {} for the project",
        "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9wY1aC3eG5iK7mO9qS1uW3y",
    ),
    (
        "anthropic-key",
        "ANTHROPIC_API_KEY is {}",
        "sk-ant-api03-Xy7Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz1Xc3Vb5Nm7Qw9Er1Ty3Ui5Op7As9Df-AAAA",
    ),
    (
        "slack-token",
        "the bot posts with {}",
        "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    ("stripe-access-key", "charge with {} please", "sk_live_4eC39HqLyjWDarjtT1zdp7dcABCDEFGHIJ"),
    ("google-api-key", "maps key {} in the page", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("private-key", "the tool printed:\n{}\nand stopped", PEM),
    ("jwt", "the session cookie was {} yesterday", JWT),
    ("url-password", "postgres://grove:{}@db.example.org:5432/grove", "hunter2secret"),
    ("bearer-token", "curl -H 'Authorization: Bearer {}' https://x", "9f8Xk2LmQ7rT4vB1nZ6wP3sD"),
    ("basic-auth", "Authorization: Basic {}", "dXNlcjpodW50ZXIyc2VjcmV0"),
    ("npm-token", "publish with {} from CI", "npm_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"),
    ("gitlab-token", "the runner uses {}", "glpat-xY7zQw2Er4Ty6Ui8Op0A"),
    (
        "sendgrid-api-key",
        "mail with {}",
        "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",
    ),
    ("password", 'the config says password = "{}"', "hunter2xyzzy"),
    ("secret-assignment", "export DATABASE_PASSWORD={} and run", "Zq8#rT2!vLp9xW4m$K"),
]

# Words that look technical and are the owner's on purpose: they stay as written.
ORDINARY = [
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 is the file's hash",
    "node 123e4567-e89b-12d3-a456-426614174000 came from it",
    "commit dd24fe9c0a1b2c3d4e5f60718293a4b5c6d7e8f9 fixed the scrub",
    'the checksum "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" matched',
    "Bearer tokens are scoped to domains; the password is in the vault",
    "TOKEN=placeholder until the owner mints one; scikit-learn and sk-learn-style names",
]


def with_secret(template: str, secret: str) -> str:
    return template.format(secret)
