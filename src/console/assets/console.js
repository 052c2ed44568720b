/*
 * The console's script (a module, on every page): copy buttons (`<button data-copy="ID">` copies the
 * text of the element with that id, shown only when this script runs) and confirmations
 * (`<form data-confirm="...">` asks before it is sent). It holds no words: the server renders them,
 * from the reader's catalogue, into the button's `data-copied` (said once copied) and
 * `data-selected` (said when the browser refused the clipboard and the text is selected instead),
 * and into the form's `data-confirm`. A button without them keeps its label.
 */
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const target = document.getElementById(button.dataset.copy);
    if (!target) return;
    try {
      await navigator.clipboard.writeText(target.textContent.trim());
      if (button.dataset.copied) button.textContent = button.dataset.copied;
    } catch {
      const range = document.createRange();
      range.selectNodeContents(target);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if (button.dataset.selected) button.textContent = button.dataset.selected;
    }
  });
}
for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (!confirm(form.dataset.confirm)) event.preventDefault();
  });
}
