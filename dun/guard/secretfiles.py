"""More secrets the guard follows to the sinks it knows (data for secrets.py): infrastructure state and decrypted
vaults (terraform.tfstate holds every resource's passwords; `sops -d`, `ansible-vault view`, `pulumi stack output
--show-secrets` print them), ML and data platform tokens (Hugging Face, Kaggle, Databricks), mobile signing keys and
store credentials (key.properties, App Store Connect .p8 keys, fastlane sessions), container registry logins, and the
Windows side of a WSL machine (the user's profile under /mnt/c)."""

from __future__ import annotations

import re

# Under the home directory: (glob over the path relative to HOME, name shown)
HOME = (
    (".cache/huggingface/token", "a Hugging Face token"), (".cache/huggingface/stored_tokens", "Hugging Face tokens"),
    (".huggingface/token", "a Hugging Face token"), (".kaggle/kaggle.json", "a Kaggle token"), (".kaggle", "Kaggle "
     "tokens"), (".databrickscfg", "Databricks tokens"), (".fastlane", "fastlane sessions"), (".fastlane/*",
     "fastlane sessions"), (".appstoreconnect*", "App Store Connect keys"), ("private_keys", "App Store Connect "
     "keys"), ("private_keys/*", "App Store Connect keys"), (".android/adbkey*", "adb keys"), (".android",
     "Android keys"), (".config/containers/auth.json", "registry credentials"), (".config/gh-copilot/*", "tokens"),
    (".wandb/*", "Weights & Biases keys"), (".netrc*", ".netrc passwords"), (".config/sops/*", "sops keys"),
    (".vault_pass*", "a vault password"), (".ansible/*vault*", "a vault password"), (".config/ngrok/*", "ngrok tokens"),
    (".terraform.d/credentials.tfrc.json", "Terraform tokens"), (".pulumi/credentials.json", "Pulumi tokens"),
    (".config/git/credentials", "git credentials"), (".mozilla/firefox", "browser profiles"),
    (".config/google-chrome", "browser profiles"), (".config/chromium", "browser profiles"),
    (".mozilla/firefox/*/logins.json", "a browser's saved logins"),
    (".mozilla/firefox/*/key4.db", "a browser's saved logins"), (".config/google-chrome/*/Login Data*",
     "a browser's saved logins"), (".config/chromium/*/Login Data*", "a browser's saved logins"),
    (".mc/config.json", "MinIO keys"), (".config/hcloud/*", "Hetzner tokens"), (".config/linode-cli", "Linode tokens"),
)
SYSTEM = (("/run/user/*/containers/auth.json", "registry credentials"), ("/etc/wireguard/*", "WireGuard keys"),
          ("/mnt/[a-z]/Users/*/.ssh*", "SSH keys (Windows side)"), ("/mnt/[a-z]/Users/*/.aws*", "AWS credentials "
           "(Windows side)"), ("/mnt/[a-z]/Users/*/.azure*", "Azure credentials (Windows side)"),
          ("/mnt/[a-z]/Users/*/.kube*", "Kubernetes credentials (Windows side)"),
          ("/mnt/[a-z]/Users/*/.docker/*", "registry credentials (Windows side)"),
          ("/mnt/[a-z]/Users/*/AppData/*/Login Data*", "a browser's saved logins"),
          ("/mnt/[a-z]/Users/*/AppData/*/Cookies*", "a browser's cookies"),
          ("/mnt/[a-z]/Users/*/AppData/Roaming/NuGet/*", "NuGet credentials"),
          ("/mnt/[a-z]/Users/*/.git-credentials", "git credentials"))
FILES = ("terraform.tfstate", "*.tfstate", "*.tfstate.backup", "key.properties", "AuthKey_*.p8", "*.p8",
         "kaggle.json", ".databrickscfg", "auth.json", "*.mobileprovision", ".vault_pass*", "vault_pass*", "*.agekey",
         "keys.txt", "*.ovpn", "firebase-adminsdk*.json", "wg[0-9]*.conf")
MAYBE = r"|tfstate|huggingface|kaggle|databricks|fastlane|appstore|private_keys|properties|\.p8|containers|android" \
        r"|/mnt/|wandb|vault|agekey|mobileprovision|pulumi|\.mc/|ngrok|auth\.json|ovpn|wireguard|wg\d|firebase|mozilla|chrom|logins"
# Commands that print a secret: (program, a word among its arguments)
PRINTERS = (("sops", "-d"), ("sops", "--decrypt"), ("sops", "exec-env"), ("ansible-vault", "view"),
            ("pulumi", "--show-secrets"), ("databricks", "token"), ("doppler", "download"), ("infisical", "export"))
_SECRET_NAME = re.compile(r"(?i)pass(?:word|wd)?|secret|token|private|credential|api_?key|_key\b|^key$|kubeconfig")


def printed(prog: str, words: set[str]) -> str | None:
    """An infrastructure output that holds a secret by its name (`terraform output -raw db_password`); other outputs
    (a URL, a bucket name) print nothing secret."""
    if prog in ("terraform", "tofu", "terragrunt") and "output" in words and (
            name := next((w for w in words if _SECRET_NAME.search(w) and not w.startswith("-")), None)):
        return f"the output of {prog} output {name}"
    return None
