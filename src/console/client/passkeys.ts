/**
 * The console's passkey script (bundled at build time with `@simplewebauthn/browser` by
 * scripts/bundle.mjs, served from /console/assets/ under its content's hash). It drives
 * every form marked `data-passkey`: `register` (adding a passkey), `authenticate` (a passkey as the
 * second factor, or alone from the sign-in page). The server renders the WebAuthn options into the
 * form's `data-options` (no inline script) and every word, from the reader's catalogue, into data
 * attributes (`data-failed`, `data-unsupported`: src/console/pages/passkeys/view.ts); none is written here.
 * On submit, the browser's WebAuthn ceremony runs, its answer goes into the form's hidden `response`
 * field, and the form is posted as any other (CSRF token, post, redirect, get).
 */
import { browserSupportsWebAuthn, startAuthentication, startRegistration } from '@simplewebauthn/browser';

function say(form: HTMLFormElement, text: string | undefined) {
  const out = form.querySelector<HTMLElement>('[data-passkey-error]');
  if (!out) return;
  out.textContent = text ?? '';
  out.hidden = !text;
}

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-passkey]')) {
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (!browserSupportsWebAuthn()) {
    say(form, form.dataset.unsupported);
    if (button) button.disabled = true;
    continue;
  }
  let busy = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (busy) return;
    busy = true;
    say(form, undefined);
    try {
      const optionsJSON = JSON.parse(form.dataset.options ?? '{}');
      const answer = form.dataset.passkey === 'register' ? await startRegistration({ optionsJSON }) : await startAuthentication({ optionsJSON });
      const field = form.querySelector<HTMLInputElement>('input[name="response"]');
      if (!field) throw new Error('no response field');
      field.value = JSON.stringify(answer);
      form.submit();
    } catch {
      // Cancelled, timed out, or refused by the device: the page stays, and says so.
      say(form, form.dataset.failed);
      busy = false;
    }
  });
}
